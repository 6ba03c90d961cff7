import type { JSX } from "solid-js";
import { Placeholder } from "./Placeholder";

export default function Sessions(): JSX.Element {
  return (
    <Placeholder
      title="Sessions"
      description="Agents at work, the folders each may touch, and the wall that confines it."
      what="Your sessions"
    />
  );
}
