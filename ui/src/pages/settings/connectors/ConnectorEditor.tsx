import type { ConnectorInfo } from "@server/ConnectorInfo";
import type { ConnectorRisk } from "@server/ConnectorRisk";
import type { ConnectorTransport } from "@server/ConnectorTransport";
import { createSignal, For, type JSX, Show, untrack } from "solid-js";
import { useApp } from "../../../app/context";
import { saveConnector } from "../../../api/connectors";
import { Dialog } from "../../../components/Dialog";
import { describeError, ProblemNotice } from "../../../components/states";
import {
  type ConnectorDraft,
  configFrom,
  connectorFieldProblem,
  type DraftField,
  type DraftProblems,
  draftFrom,
  SECRET_PLACEHOLDER,
  usesToken,
} from "./draft";
import { PairRows } from "./PairRows";
import { RISK_WORDS } from "./words";

const TRANSPORTS: { value: ConnectorTransport; label: string; hint: string }[] = [
  { value: "stdio", label: "Program on this machine", hint: "Paddock starts it and speaks MCP over its stdin and stdout (stdio)." },
  { value: "streamable-http", label: "HTTP endpoint", hint: "Paddock connects to a running server (streamable HTTP)." },
];

/**
 * Adds a connector or changes one: where its server is (a program and its arguments and
 * environment, or a URL and headers), a token stored in the key store (typed here, sent once,
 * never shown again), and the risk of every tool. What the host refuses is shown at the field
 * it names.
 */
export function ConnectorEditor(props: {
  existing: ConnectorInfo | null;
  onClose: () => void;
  onSaved: (info: ConnectorInfo) => void;
}): JSX.Element {
  const app = useApp();
  const [draft, setDraft] = createSignal<ConnectorDraft>(draftFrom(untrack(() => props.existing?.config ?? null)));
  const [token, setToken] = createSignal("");
  const [problems, setProblems] = createSignal<DraftProblems>({});
  const [general, setGeneral] = createSignal<string | null>(null);
  const [busy, setBusy] = createSignal(false);
  const editing = () => props.existing !== null;
  const update = (change: Partial<ConnectorDraft>) => setDraft({ ...draft(), ...change });
  const tokenCarried = () => props.existing?.sends.some((sent) => sent.carries_token) ?? false;

  const save = async () => {
    setProblems({});
    setGeneral(null);
    const built = configFrom(draft());
    if ("problems" in built) {
      setProblems(built.problems);
      return;
    }
    const typed = token().trim();
    if (typed !== "" && !usesToken(draft())) {
      setProblems({
        token: `Nothing uses the token: write ${SECRET_PLACEHOLDER} in the ${draft().transport === "stdio" ? "variable" : "header"} that should carry it.`,
      });
      return;
    }
    setBusy(true);
    try {
      const info = await saveConnector(app.api, built.config, typed === "" ? null : typed);
      setToken("");
      props.onSaved(info);
    } catch (error) {
      const message = describeError(error).message;
      const field = connectorFieldProblem(message);
      if (field) {
        setProblems({ [field.field]: field.problem });
      } else {
        setGeneral(message);
      }
    } finally {
      setBusy(false);
    }
  };

  const problemOf = (field: DraftField) => problems()[field];
  const fieldError = (field: DraftField) => (
    <Show when={problemOf(field)}>
      {(text) => (
        <span class="field-error" id={`connector-${field}-problem`}>
          {text()}
        </span>
      )}
    </Show>
  );
  /** The control of `field`: its id, its hint and problem as its description, and whether it is invalid. */
  const control = (field: DraftField, hinted = true) => ({
    id: `connector-${field}`,
    "aria-invalid": problemOf(field) ? ("true" as const) : undefined,
    "aria-describedby":
      [hinted ? `connector-${field}-hint` : "", problemOf(field) ? `connector-${field}-problem` : ""].join(" ").trim() ||
      undefined,
  });

  return (
    <Dialog
      open
      wide
      title={editing() ? `Connector ${props.existing?.name ?? ""}` : "Add a connector"}
      description="An MCP server the agent may call. It runs on this machine, outside every sandbox: every call asks you first (except in bypass mode) and is written to the audit trail."
      onClose={() => { props.onClose(); }}
    >
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <div class="field">
          <label class="field-label" for="connector-name">
            Name
          </label>
          <input
            class="input input-mono"
            type="text"
            placeholder="tracker"
            value={draft().name}
            disabled={editing()}
            {...control("name")}
            onInput={(event) => { update({ name: event.currentTarget.value }); }}
          />
          <span class="field-hint" id="connector-name-hint">
            Lowercase letters, digits and dashes. The model sees its tools as{" "}
            <code>mcp__{draft().name.trim() || "name"}__tool</code>.
          </span>
          {fieldError("name")}
        </div>

        <fieldset class="form-section">
          <legend class="form-legend">Where the server is</legend>
          <div class="transport-choices">
            <For each={TRANSPORTS}>
              {(choice) => (
                <label class="transport-choice" classList={{ "transport-choice-current": draft().transport === choice.value }}>
                  <input
                    type="radio"
                    name="connector-transport"
                    value={choice.value}
                    checked={draft().transport === choice.value}
                    onChange={() => { update({ transport: choice.value }); }}
                  />
                  <span>
                    <span class="transport-name">{choice.label}</span>
                    <span class="field-hint">{choice.hint}</span>
                  </span>
                </label>
              )}
            </For>
          </div>
          {fieldError("transport")}
        </fieldset>

        <Show
          when={draft().transport === "stdio"}
          fallback={
            <>
              <div class="field">
                <label class="field-label" for="connector-url">
                  URL
                </label>
                <input
                  class="input input-mono"
                  type="url"
                  placeholder="https://mcp.example.com/mcp"
                  value={draft().url}
                  {...control("url", false)}
                  onInput={(event) => { update({ url: event.currentTarget.value }); }}
                />
                {fieldError("url")}
              </div>
              <PairRows
                legend="Headers"
                hint={<>Sent with every request. Write <code>{SECRET_PLACEHOLDER}</code> where the token goes, e.g. <code>Authorization = Bearer {SECRET_PLACEHOLDER}</code>.</>}
                rows={draft().headers}
                keyLabel="Header"
                keyPlaceholder="Authorization"
                valuePlaceholder={`Bearer ${SECRET_PLACEHOLDER}`}
                problem={problemOf("headers")}
                problemId="connector-headers-problem"
                onChange={(headers) => { update({ headers }); }}
              />
            </>
          }
        >
          <div class="field">
            <label class="field-label" for="connector-command">
              Command
            </label>
            <input
              class="input input-mono"
              type="text"
              placeholder="/usr/local/bin/tracker-mcp"
              value={draft().command}
              {...control("command")}
              onInput={(event) => { update({ command: event.currentTarget.value }); }}
            />
            <span class="field-hint" id="connector-command-hint">
              An absolute path, or a program found on PATH.
            </span>
            {fieldError("command")}
          </div>
          <div class="field">
            <label class="field-label" for="connector-args">
              Arguments
            </label>
            <textarea
              class="textarea input-mono"
              rows="2"
              placeholder="--readonly"
              value={draft().args}
              {...control("args")}
              onInput={(event) => { update({ args: event.currentTarget.value }); }}
            />
            <span class="field-hint" id="connector-args-hint">
              One per line.
            </span>
            {fieldError("args")}
          </div>
          <PairRows
            legend="Environment"
            hint={<>The server gets these and a short safe list (<code>PATH</code>, <code>HOME</code>, <code>LANG</code>, …), nothing else of Paddock's. Write <code>{SECRET_PLACEHOLDER}</code> where the token goes.</>}
            rows={draft().env}
            keyLabel="Variable"
            keyPlaceholder="TRACKER_TOKEN"
            valuePlaceholder={SECRET_PLACEHOLDER}
            problem={problemOf("env")}
            problemId="connector-env-problem"
            onChange={(env) => { update({ env }); }}
          />
        </Show>

        <div class="field">
          <label class="field-label" for="connector-token">
            Token
          </label>
          <input
            class="input input-mono"
            type="password"
            autocomplete="off"
            placeholder={editing() && tokenCarried() ? "Leave empty to keep the stored token" : "Optional"}
            value={token()}
            {...control("token")}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
          <span class="field-hint" id="connector-token-hint">
            Stored in this machine's key store as <code>connector-{draft().name.trim() || "name"}</code>, never in the
            config file, and never shown again. It reaches only this server, where{" "}
            <code>{SECRET_PLACEHOLDER}</code> stands.
          </span>
          {fieldError("token")}
        </div>

        <div class="field">
          <label class="field-label" for="connector-risk">
            Risk of every tool
          </label>
          <select
            class="select"
            value={draft().everyTool}
            {...control("risk")}
            onChange={(event) => { update({ everyTool: event.currentTarget.value as ConnectorRisk | "" }); }}
          >
            <option value="">As each tool says (at least write)</option>
            <option value="read">{RISK_WORDS.read.label}: {RISK_WORDS.read.detail}</option>
            <option value="write">{RISK_WORDS.write.label}: {RISK_WORDS.write.detail}</option>
            <option value="destructive">{RISK_WORDS.destructive.label}: {RISK_WORDS.destructive.detail}</option>
          </select>
          <span class="field-hint" id="connector-risk-hint">
            A tool's own setting in the tools list wins over this one.
          </span>
          {fieldError("risk")}
        </div>

        <ProblemNotice text={general()} />
        <div class="form-actions">
          <button type="button" class="button" onClick={() => { props.onClose(); }}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={busy()}>
            {editing() ? "Save connector" : "Add connector"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
