import type { ProviderKind } from "@server/ProviderKind";
import { type JSX, Show } from "solid-js";
import { Icon } from "./Icon";

/**
 * The warning every page carries while the machine runs sessions with no wall (`direct`): tool
 * calls then touch the real machine with the user's own rights.
 */
export function DirectModeWarning(props: { provider: ProviderKind | null }): JSX.Element {
  return (
    <Show when={props.provider === "direct"}>
      <div class="direct-warning" role="region" aria-label="No sandbox">
        <Icon name="alert" />
        <p>
          <strong>No sandbox.</strong> This machine runs sessions in direct mode: tool calls run
          on this computer with your rights, with no wall around them. Choose OpenShell or the
          local wall in <a href="/settings/sandbox">Settings ▸ Sandbox</a>.
        </p>
      </div>
    </Show>
  );
}
