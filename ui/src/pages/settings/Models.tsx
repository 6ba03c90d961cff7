import type { JSX } from "solid-js";
import { Placeholder } from "../Placeholder";

export default function ModelSettings(): JSX.Element {
  return (
    <Placeholder
      title="Models"
      description="The model provider, the model, and where its key is kept."
      what="Model settings"
    />
  );
}
