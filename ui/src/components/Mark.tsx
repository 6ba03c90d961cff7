import type { JSX } from "solid-js";

/** Paddock's mark (the source of `icons/paddock.svg`, drawn on a 64 grid). */
export function Mark(props: { size?: number }): JSX.Element {
  return (
    <svg
      class="mark"
      width={props.size ?? 24}
      height={props.size ?? 24}
      viewBox="4 4 56 56"
      aria-hidden="true"
    >
      <rect x="4" y="4" width="56" height="56" rx="13" fill="var(--mark-field, #2f7356)" />
      <path d="M18.75 18.75h26.5v26.5h-26.5z" fill="none" stroke="#fff" stroke-width="3.25" />
      <g fill="#fff">
        <rect x="16" y="16" width="5.5" height="5.5" rx="1.1" />
        <rect x="42.5" y="16" width="5.5" height="5.5" rx="1.1" />
        <rect x="16" y="42.5" width="5.5" height="5.5" rx="1.1" />
        <rect x="42.5" y="42.5" width="5.5" height="5.5" rx="1.1" />
        <circle cx="32" cy="32" r="5.25" />
      </g>
    </svg>
  );
}
