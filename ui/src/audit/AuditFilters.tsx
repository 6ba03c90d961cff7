import type { SessionInfo } from "@server/SessionInfo";
import { createSignal, For, type JSX, untrack } from "solid-js";
import type { AuditFilters } from "../api/audit";
import { Icon } from "../components/Icon";
import { KIND_CHOICES as KINDS } from "./summary";

export const NO_FILTERS: AuditFilters = {
  session: null,
  kind: null,
  call_id: null,
  tool: null,
  decision: null,
  enforcement: null,
  status: null,
  since_ms: null,
  until_ms: null,
  text: null,
};

const DECISIONS = [
  ["", "Any decision"],
  ["allow", "Allowed"],
  ["deny", "Denied"],
] as const;
const ENFORCEMENTS = [
  ["", "Any wall"],
  ["local", "Local wall"],
  ["openshell", "OpenShell"],
  ["host", "Host"],
  ["none", "None"],
] as const;
const STATUSES = [
  ["", "Any status"],
  ["started", "Started"],
  ["finished", "Finished"],
  ["failed", "Failed"],
  ["cancelled", "Cancelled"],
  ["denied", "Denied"],
] as const;

/** `datetime-local` text ↔ milliseconds, in the browser's time zone. */
function toMs(local: string): number | null {
  if (local === "") {
    return null;
  }
  const ms = new Date(local).getTime();
  return Number.isNaN(ms) ? null : ms;
}

function toLocal(ms: number | null): string {
  if (ms === null) {
    return "";
  }
  const date = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function Select(props: {
  label: string;
  value: string | null;
  options: readonly (readonly [string, string])[];
  onChange: (value: string | null) => void;
}): JSX.Element {
  return (
    <label class="field field-compact">
      <span class="field-label">{props.label}</span>
      <select class="select" value={props.value ?? ""} onChange={(e) => { props.onChange(e.currentTarget.value || null); }}>
        <For each={props.options}>{([value, label]) => <option value={value}>{label}</option>}</For>
      </select>
    </label>
  );
}

/**
 * Every filter the audit API has. Choices in lists apply at once; typed ones when the form is
 * submitted (Enter or "Apply").
 */
export function AuditFiltersForm(props: {
  filters: AuditFilters;
  sessions: SessionInfo[];
  onApply: (filters: AuditFilters) => void;
}): JSX.Element {
  const [draft, setDraft] = createSignal<AuditFilters>(untrack(() => ({ ...props.filters })));
  const set = (patch: Partial<AuditFilters>, apply = false) => {
    const next = { ...draft(), ...patch };
    setDraft(next);
    if (apply) {
      props.onApply(next);
    }
  };
  const text = (value: string) => (value.trim() === "" ? null : value);
  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        props.onApply(draft());
      }}
    >
      <label class="field field-compact filters-search">
        <span class="field-label">Search</span>
        <input
          class="input"
          type="search"
          placeholder="Text anywhere in the record"
          value={draft().text ?? ""}
          onInput={(e) => { set({ text: text(e.currentTarget.value) }); }}
        />
      </label>
      <label class="field field-compact">
        <span class="field-label">Session</span>
        <select class="select" value={draft().session ?? ""} onChange={(e) => { set({ session: e.currentTarget.value || null }, true); }}>
          <option value="">Any session</option>
          <For each={props.sessions}>
            {(s) => <option value={s.id}>{s.title ? `${s.title.slice(0, 40)} (${s.id.slice(0, 8)})` : s.id.slice(0, 8)}</option>}
          </For>
        </select>
      </label>
      <Select label="Kind" value={draft().kind} options={KINDS} onChange={(kind) => { set({ kind }, true); }} />
      <Select label="Status" value={draft().status} options={STATUSES} onChange={(status) => { set({ status }, true); }} />
      <Select label="Decision" value={draft().decision} options={DECISIONS} onChange={(decision) => { set({ decision }, true); }} />
      <Select label="Wall" value={draft().enforcement} options={ENFORCEMENTS} onChange={(enforcement) => { set({ enforcement }, true); }} />
      <label class="field field-compact">
        <span class="field-label">Tool</span>
        <input class="input input-mono" type="text" placeholder="run_bash" value={draft().tool ?? ""} onInput={(e) => { set({ tool: text(e.currentTarget.value) }); }} />
      </label>
      <label class="field field-compact">
        <span class="field-label">Call id</span>
        <input class="input input-mono" type="text" value={draft().call_id ?? ""} onInput={(e) => { set({ call_id: text(e.currentTarget.value) }); }} />
      </label>
      <label class="field field-compact">
        <span class="field-label">From</span>
        <input class="input" type="datetime-local" value={toLocal(draft().since_ms)} onChange={(e) => { set({ since_ms: toMs(e.currentTarget.value) }, true); }} />
      </label>
      <label class="field field-compact">
        <span class="field-label">Until</span>
        <input class="input" type="datetime-local" value={toLocal(draft().until_ms)} onChange={(e) => { set({ until_ms: toMs(e.currentTarget.value) }, true); }} />
      </label>
      <div class="filters-actions">
        <button type="submit" class="button button-primary">
          Apply
        </button>
        <button
          type="button"
          class="button button-ghost"
          onClick={() => {
            setDraft({ ...NO_FILTERS });
            props.onApply({ ...NO_FILTERS });
          }}
        >
          <Icon name="close" size={13} />
          Clear
        </button>
      </div>
    </form>
  );
}
