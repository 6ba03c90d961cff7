import type { FolderGrant } from "@server/FolderGrant";
import type { SessionState } from "@server/SessionState";
import { For, type JSX } from "solid-js";
import { Badge, type Tone } from "./Badge";
import { baseName } from "./format";
import { Icon } from "./Icon";

const STATES: Record<SessionState, { label: string; tone: Tone; title: string }> = {
  running: { label: "Running", tone: "ok", title: "This Paddock runs it: it takes turns and approvals here" },
  elsewhere: {
    label: "Elsewhere",
    tone: "info",
    title: "Another Paddock process on this machine runs it",
  },
  stored: { label: "Stored", tone: "neutral", title: "Nobody runs it; resume it to continue" },
};

export function SessionStateBadge(props: { state: SessionState }): JSX.Element {
  const spec = () => STATES[props.state];
  return (
    <Badge tone={spec().tone} title={spec().title}>
      {spec().label}
    </Badge>
  );
}

/** A session's folders as chips: the folder's name and its access; the full path on hover. */
export function FolderChips(props: { folders: FolderGrant[]; max?: number }): JSX.Element {
  const shown = () => props.folders.slice(0, props.max ?? props.folders.length);
  const hidden = () => props.folders.length - shown().length;
  return (
    <ul class="chips" aria-label="Folders">
      <For each={shown()}>
        {(folder) => (
          <li class="chip" title={`${folder.path} (${accessWords(folder)})`}>
            <Icon name="folder" size={13} />
            <span class="chip-text">{baseName(folder.path)}</span>
            <span class={`chip-access chip-access-${folder.access === "read_write" ? "rw" : "ro"}`}>
              <span aria-hidden="true">{folder.access === "read_write" ? "rw" : "ro"}</span>
              <span class="visually-hidden">{accessWords(folder)}</span>
            </span>
          </li>
        )}
      </For>
      {hidden() > 0 ? <li class="chip chip-more">+{hidden()} more</li> : null}
    </ul>
  );
}

export function accessWords(folder: FolderGrant): string {
  return folder.access === "read_write" ? "read-write" : "read-only";
}
