import type { JSX } from "solid-js";
import { Placeholder } from "./Placeholder";

export default function Inbox(): JSX.Element {
  return (
    <Placeholder
      title="Inbox"
      description="Every session's pending approvals in one list. The first answer wins."
      what="Pending approvals"
    />
  );
}
