import type { JSX } from "solid-js";
import { Placeholder } from "../Placeholder";

export default function SandboxSettings(): JSX.Element {
  return (
    <Placeholder
      title="Sandbox"
      description="The wall sessions run behind, the hosts they may reach, and what they may borrow."
      what="This machine's sandbox settings"
    />
  );
}
