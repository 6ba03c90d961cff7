import type { JSX } from "solid-js";

/** Our own line icons, drawn on a 20×20 grid with a 1.5 stroke. */
const PATHS = {
  sessions:
    "M3.5 5.5a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v6a2 2 0 0 1-2 2H9l-3.5 3v-3h0a2 2 0 0 1-2-2z M7 7.5h6 M7 10h4",
  inbox:
    "M3 11.5 5 4.5h10l2 7 M3 11.5v3a1.5 1.5 0 0 0 1.5 1.5h11a1.5 1.5 0 0 0 1.5-1.5v-3h-4.5a2.5 2.5 0 0 1-5 0z",
  audit:
    "M6 3.5h8a1.5 1.5 0 0 1 1.5 1.5v11.5l-2-1.2-1.5 1.2-1.5-1.2-1.5 1.2-1.5-1.2-2 1.2V5A1.5 1.5 0 0 1 6 3.5z M7.5 7.5h5 M7.5 10.5h5",
  sandbox:
    "M4 16.5v-9 M16 16.5v-9 M10 16.5v-9 M2.5 9.5h15 M2.5 13.5h15 M4 7.5l0-2 M10 7.5v-2 M16 7.5v-2",
  models:
    "M6.5 5.5h7a1 1 0 0 1 1 1v7a1 1 0 0 1-1 1h-7a1 1 0 0 1-1-1v-7a1 1 0 0 1 1-1z M8.5 8.5h3v3h-3z M8 3v2.5 M12 3v2.5 M8 14.5V17 M12 14.5V17 M3 8h2.5 M3 12h2.5 M14.5 8H17 M14.5 12H17",
  sun: "M10 6.5a3.5 3.5 0 1 1 0 7 3.5 3.5 0 0 1 0-7z M10 2.5v1.5 M10 16v1.5 M2.5 10H4 M16 10h1.5 M4.7 4.7l1 1 M14.3 14.3l1 1 M4.7 15.3l1-1 M14.3 5.7l1-1",
  moon: "M15.5 12.5A6 6 0 0 1 7.5 4.5a6 6 0 1 0 8 8z",
  monitor: "M3.5 4.5h13v9h-13z M7.5 16.5h5 M10 13.5v3",
  alert: "M10 3.5 17.5 16.5h-15z M10 8.5v3.5 M10 14v.01",
  refresh: "M15.5 8.5A5.5 5.5 0 0 0 5.3 6.6 M4.5 11.5a5.5 5.5 0 0 0 10.2 1.9 M5 3.5v3.5h3.5 M15 16.5V13h-3.5",
  signOut: "M8 4.5H5a1.5 1.5 0 0 0-1.5 1.5v8A1.5 1.5 0 0 0 5 15.5h3 M12 7l3 3-3 3 M15 10H8",
  key: "M7 9.5a3.5 3.5 0 1 1 2.5 3.3L8 14.3H6.5v1.5H5v1.2H3v-2l3.9-3.9A3.5 3.5 0 0 1 7 9.5z M11.5 8.5v.01",
  empty: "M3.5 6.5h13v9a1.5 1.5 0 0 1-1.5 1.5H5a1.5 1.5 0 0 1-1.5-1.5z M3.5 6.5 5 3.5h10l1.5 3 M8 10h4",
  plus: "M10 4.5v11 M4.5 10h11",
  close: "M5.5 5.5l9 9 M14.5 5.5l-9 9",
  check: "M4.5 10.5l3.5 3.5 7.5-8",
  folder: "M3 6a1.5 1.5 0 0 1 1.5-1.5h3.2l1.6 1.8h6.2A1.5 1.5 0 0 1 17 7.8v6.7a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 3 14.5z",
  trash: "M4.5 6h11 M8 6V4.5h4V6 M6 6l.7 9.5a1.5 1.5 0 0 0 1.5 1.4h3.6a1.5 1.5 0 0 0 1.5-1.4L14 6 M8.5 9v5 M11.5 9v5",
  play: "M6.5 4.8v10.4a.6.6 0 0 0 .9.5l8.2-5.2a.6.6 0 0 0 0-1L7.4 4.3a.6.6 0 0 0-.9.5z",
  stop: "M5.5 5.5h9v9h-9z",
  terminal: "M3.5 4.5h13v11h-13z M6 8l2.5 2L6 12 M10 12.5h4",
  file: "M6 3.5h5l3.5 3.5v9.5H6z M11 3.5V7h3.5",
  globe: "M10 3.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z M3.5 10h13 M10 3.5c2 2 2.8 4.2 2.8 6.5s-.8 4.5-2.8 6.5c-2-2-2.8-4.2-2.8-6.5s.8-4.5 2.8-6.5z",
  shield: "M10 3l6 2.5v4.2c0 3.6-2.5 6.2-6 7.3-3.5-1.1-6-3.7-6-7.3V5.5z M7.5 10l2 2 3.5-4",
  lock: "M5.5 9h9v7.5h-9z M7.5 9V6.8a2.5 2.5 0 0 1 5 0V9",
  download: "M10 3.5v9 M6.5 9.5 10 13l3.5-3.5 M4 16.5h12",
  chevronRight: "M8 5l5 5-5 5",
  chevronDown: "M5 8l5 5 5-5",
  send: "M3.5 10 16 4l-3.5 12.5-3-5z M9.5 11.5 16 4",
  edit: "M12.5 4.5l3 3-8 8H4.5v-3z M11 6l3 3",
  plug: "M7.5 3.5v4 M12.5 3.5v4 M5.5 7.5h9V10a4.5 4.5 0 0 1-9 0z M10 14.5v2.5",
  clock: "M10 3.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z M10 6.5V10l2.5 1.5",
} as const;

export type IconName = keyof typeof PATHS;

export function Icon(props: { name: IconName; size?: number; class?: string }): JSX.Element {
  return (
    <svg
      class={props.class ? `icon ${props.class}` : "icon"}
      width={props.size ?? 16}
      height={props.size ?? 16}
      viewBox="0 0 20 20"
      fill="none"
      stroke="currentColor"
      stroke-width="1.5"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
    >
      <path d={PATHS[props.name]} />
    </svg>
  );
}
