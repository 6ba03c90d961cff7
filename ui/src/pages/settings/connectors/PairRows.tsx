import { Index, type JSX, Show } from "solid-js";
import { Icon } from "../../../components/Icon";
import type { Pair } from "./draft";

/**
 * Name/value rows (a stdio server's environment, an HTTP server's headers). Rows are kept by
 * position (`<Index>`), so a keystroke updates the row's fields and focus stays where it is.
 */
export function PairRows(props: {
  legend: string;
  hint: JSX.Element;
  rows: Pair[];
  keyLabel: string;
  keyPlaceholder: string;
  valuePlaceholder: string;
  problem: string | undefined;
  problemId: string;
  onChange: (rows: Pair[]) => void;
}): JSX.Element {
  const set = (index: number, change: Partial<Pair>) => {
    props.onChange(props.rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  };
  return (
    <fieldset class="form-section pair-rows" aria-describedby={props.problem ? props.problemId : undefined}>
      <legend class="form-legend">{props.legend}</legend>
      <p class="field-hint">{props.hint}</p>
      <Show when={props.rows.length > 0}>
        <ul class="pair-list">
          <Index each={props.rows}>
            {(row, index) => (
              <li class="pair-row">
                <input
                  class="input input-mono"
                  type="text"
                  aria-label={`${props.keyLabel} ${index + 1}`}
                  placeholder={props.keyPlaceholder}
                  value={row().key}
                  aria-invalid={props.problem ? "true" : undefined}
                  onInput={(event) => { set(index, { key: event.currentTarget.value }); }}
                />
                <span class="pair-equals" aria-hidden="true">
                  =
                </span>
                <input
                  class="input input-mono"
                  type="text"
                  aria-label={`Value of ${props.keyLabel.toLowerCase()} ${index + 1}`}
                  placeholder={props.valuePlaceholder}
                  value={row().value}
                  onInput={(event) => { set(index, { value: event.currentTarget.value }); }}
                />
                <button
                  type="button"
                  class="button button-ghost button-icon button-small"
                  aria-label={`Remove ${props.keyLabel.toLowerCase()} ${index + 1}`}
                  onClick={() => { props.onChange(props.rows.filter((_, i) => i !== index)); }}
                >
                  <Icon name="close" size={13} />
                </button>
              </li>
            )}
          </Index>
        </ul>
      </Show>
      <div>
        <button
          type="button"
          class="button button-small"
          onClick={() => { props.onChange([...props.rows, { key: "", value: "" }]); }}
        >
          <Icon name="plus" size={13} />
          Add {props.keyLabel.toLowerCase()}
        </button>
      </div>
      <Show when={props.problem}>
        {(text) => (
          <span class="field-error" id={props.problemId}>
            {text()}
          </span>
        )}
      </Show>
    </fieldset>
  );
}
