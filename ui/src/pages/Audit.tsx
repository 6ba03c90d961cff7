import type { JSX } from "solid-js";
import { Placeholder } from "./Placeholder";

export default function Audit(): JSX.Element {
  return (
    <Placeholder
      title="Audit trail"
      description="Every tool call, decision and denial, in a hash chain you can verify and export."
      what="Audit events"
    />
  );
}
