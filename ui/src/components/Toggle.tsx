import type { JSX } from "solid-js";

/** An on/off switch: a checkbox with the `switch` role, labelled by its visible text. */
export function Toggle(props: {
  checked: boolean;
  label: string;
  /** Hide the label visually (it is still read out). */
  hideLabel?: boolean;
  disabled?: boolean;
  description?: string;
  onChange: (checked: boolean) => void;
}): JSX.Element {
  return (
    <label class="toggle" classList={{ "toggle-disabled": props.disabled === true }}>
      <input
        type="checkbox"
        role="switch"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(event) => {
          props.onChange(event.currentTarget.checked);
        }}
      />
      <span class="toggle-track" aria-hidden="true">
        <span class="toggle-thumb" />
      </span>
      <span classList={{ "visually-hidden": props.hideLabel === true, "toggle-label": true }}>
        {props.label}
      </span>
    </label>
  );
}
