import type { ProtectedAction } from "@server/ProtectedAction";
import { type JSX, Show } from "solid-js";
import { Badge, type Tone } from "../components/Badge";
import { Icon } from "../components/Icon";
import type { ProtectedChange } from "./timeline";

/** What Paddock did about a protected file, in words and a tone. */
const ACTIONS: Record<ProtectedAction, { label: string; tone: Tone; said: string }> = {
  quarantined: {
    label: "Moved aside",
    tone: "warn",
    said: "Paddock moved it out of the folder so nothing on this machine runs it.",
  },
  sanitized: {
    label: "Cleaned",
    tone: "warn",
    said: "Paddock removed what would have run on this machine and kept the rest.",
  },
  restored: {
    label: "Restored",
    tone: "ok",
    said: "Paddock put the original back.",
  },
  reported: {
    label: "Left in place",
    tone: "danger",
    said: "Paddock could not undo it: look at the file before you run git or open the folder in an editor.",
  },
};

/** Text ending in one full stop (the list's reasons are clauses; names like `core.hooksPath` keep their case). */
function sentence(text: string): string {
  const trimmed = text.trim().replace(/\.+$/, "");
  return trimmed === "" ? "" : `${trimmed}.`;
}

export function protectedActionLabel(action: ProtectedAction): string {
  return ACTIONS[action].label;
}

/**
 * A file the host runs later (a git hook or config, a shell dotfile, editor or agent settings)
 * that a command of the session created or changed: which, why it is protected, what was found,
 * and what Paddock did about it.
 */
export function ProtectedCard(props: { change: ProtectedChange }): JSX.Element {
  const action = () => ACTIONS[props.change.action];
  return (
    <div class="protected-card" role="note" aria-label="Protected file changed">
      <div class="protected-card-head">
        <Icon name="lock" />
        <span class="protected-card-title">A protected file was changed</span>
        <Badge tone={action().tone}>{action().label}</Badge>
      </div>
      <code class="protected-card-path" title={props.change.path}>
        {props.change.path}
      </code>
      <p class="protected-card-reason">
        <span class="protected-card-label">Why it is protected:</span> {sentence(props.change.reason)}
      </p>
      <Show when={props.change.detail}>
        <p class="protected-card-detail">{sentence(props.change.detail)}</p>
      </Show>
      <p class="protected-card-action">
        {action().said}
        <Show when={props.change.quarantinedTo}>
          {(where) => (
            <>
              {" "}
              The original is kept at <code>{where()}</code>.
            </>
          )}
        </Show>
      </p>
    </div>
  );
}
