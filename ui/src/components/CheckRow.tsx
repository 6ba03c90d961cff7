import type { StatusCheck } from "@server/StatusCheck";
import { type JSX, Show } from "solid-js";
import { Icon } from "./Icon";

/** One check of the machine's wall: its name and detail, and the fix when it failed. */
export function CheckRow(props: { check: StatusCheck }): JSX.Element {
  return (
    <li class="check-row" classList={{ "check-failed": !props.check.ok }}>
      <Icon name={props.check.ok ? "check" : "alert"} size={13} />
      <div>
        <span class="check-name">{props.check.name}</span>
        <span class="check-detail">{props.check.detail}</span>
        <Show when={!props.check.ok && props.check.fix}>
          {(fix) => (
            <span class="check-fix">
              Fix: <code>{fix()}</code>
            </span>
          )}
        </Show>
      </div>
    </li>
  );
}
