import type { ConnectorInfo } from "@server/ConnectorInfo";
import type { ConnectorRisk } from "@server/ConnectorRisk";
import type { ConnectorTestReport } from "@server/ConnectorTestReport";
import type { ConnectorToolInfo } from "@server/ConnectorToolInfo";
import { createEffect, createResource, createSignal, For, Index, type JSX, Match, on, Show, Switch } from "solid-js";
import { useApp } from "../../app/context";
import { connectorTools, listConnectors, removeConnector, saveConnector, setConnectorEnabled, testConnector } from "../../api/connectors";
import { Dialog } from "../../components/Dialog";
import { Badge } from "../../components/Badge";
import { Icon } from "../../components/Icon";
import { PageHeader } from "../../components/PageHeader";
import { describeError, Empty, ErrorState, Loading, ProblemNotice } from "../../components/states";
import { Toggle } from "../../components/Toggle";
import { ConnectorEditor } from "./connectors/ConnectorEditor";
import { ConnectorTools } from "./connectors/ConnectorTools";
import { withToolRisk } from "./connectors/draft";
import { statusWords, transportWords } from "./connectors/words";

/**
 * Settings ▸ Connectors: the MCP servers the agent may call from the host, each with its
 * state, what it sends (names only: a token never comes back), its tools with the names the
 * model sees and their risks; add, edit, turn on or off, test, remove.
 */
export default function Connectors(): JSX.Element {
  const app = useApp();
  const [connectors, { refetch, mutate }] = createResource(() => listConnectors(app.api));
  const [editing, setEditing] = createSignal<ConnectorInfo | "new" | null>(null);
  const [removing, setRemoving] = createSignal<string | null>(null);
  const [removeBusy, setRemoveBusy] = createSignal(false);
  const [removeProblem, setRemoveProblem] = createSignal<string | null>(null);
  const askRemove = (name: string | null) => {
    setRemoveProblem(null);
    setRemoving(name);
  };
  const remove = async (name: string) => {
    setRemoveBusy(true);
    setRemoveProblem(null);
    try {
      await removeConnector(app.api, name);
      mutate((list) => (list ?? []).filter((c) => c.name !== name));
      setRemoving(null);
    } catch (error) {
      setRemoveProblem(describeError(error).message);
    } finally {
      setRemoveBusy(false);
    }
  };
  const ready = () => connectors.state === "ready" || connectors.state === "refreshing";
  const list = (): ConnectorInfo[] => (ready() ? (connectors.latest ?? []) : []);
  const replace = (info: ConnectorInfo) => {
    mutate((list) => {
      const current = list ?? [];
      return current.some((c) => c.name === info.name)
        ? current.map((c) => (c.name === info.name ? info : c))
        : [...current, info];
    });
  };
  // A function: a DOM node can be in one place only, and the button is in two (header, empty state).
  const addButton = () => (
    <button type="button" class="button button-primary" onClick={() => setEditing("new")}>
      <Icon name="plus" />
      Add connector
    </button>
  );
  return (
    <>
      <PageHeader
        title="Connectors"
        description="MCP servers the agent may call, run by Paddock on this machine outside every sandbox, with their own tokens from the key store. Every call asks you (except in bypass mode) and is audited."
        actions={addButton()}
      />
      <section class="page-body stack">
        {/* Not AsyncView: it renders its content anew for every new value, and a card must
            outlive a change to its connector (open tools, a test's answer). */}
        <Switch fallback={<Loading label="Loading the connectors…" />}>
          <Match when={connectors.state === "errored"}>
            <ErrorState
              error={connectors.error as unknown}
              title="The connectors could not be loaded"
              onRetry={() => void refetch()}
            />
          </Match>
          <Match when={ready() && list().length === 0}>
            <Empty title="No connectors yet" action={addButton()}>
              A connector gives the agent an issue tracker, a search API or your documentation
              without putting a key inside a sandbox. The built-in web fetch needs none.
            </Empty>
          </Match>
          <Match when={ready()}>
            <ul class="connector-list" aria-label="Connectors">
              {/* By position: a changed connector keeps its card. */}
              <Index each={list()}>
                {(connector) => (
                  <ConnectorCard
                    connector={connector()}
                    onChanged={replace}
                    onStarted={() => void refetch()}
                    onEdit={() => setEditing(connector())}
                    onRemove={() => { askRemove(connector().name); }}
                  />
                )}
              </Index>
            </ul>
          </Match>
        </Switch>
      </section>
      <Dialog
        open={removing() !== null}
        title={`Remove ${removing() ?? "the connector"}?`}
        description="Its entry leaves your config file, its server stops, and its token is deleted from the key store. Sessions no longer offer its tools."
        onClose={() => { askRemove(null); }}
        footer={
          <>
            <button type="button" class="button" onClick={() => { askRemove(null); }}>
              Cancel
            </button>
            <button
              type="button"
              class="button button-danger"
              disabled={removeBusy()}
              onClick={() => {
                const name = removing();
                if (name) {
                  void remove(name);
                }
              }}
            >
              {removeBusy() ? "Removing…" : "Remove connector"}
            </button>
          </>
        }
      >
        <Show when={removeProblem()} fallback={<p>Adding it again later needs its token again.</p>}>
          {(text) => (
            <p class="field-error" role="alert">
              {text()}
            </p>
          )}
        </Show>
      </Dialog>
      <Show when={editing()}>
        {(which) => (
          <ConnectorEditor
            existing={which() === "new" ? null : (which() as ConnectorInfo)}
            onClose={() => setEditing(null)}
            onSaved={(info) => {
              replace(info);
              setEditing(null);
            }}
          />
        )}
      </Show>
    </>
  );
}

/** One connector: its state and target, what it sends, and its actions and tools. */
function ConnectorCard(props: {
  connector: ConnectorInfo;
  onChanged: (info: ConnectorInfo) => void;
  /** Listing the tools started the server: its state and tool count changed. */
  onStarted: () => void;
  onEdit: () => void;
  onRemove: () => void;
}): JSX.Element {
  const app = useApp();
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const [report, setReport] = createSignal<ConnectorTestReport | null>(null);
  const [showTools, setShowTools] = createSignal(false);
  const [tools, { refetch: refetchTools, mutate: setTools }] = createResource(
    () => (showTools() && props.connector.enabled ? props.connector.name : null),
    (name) => connectorTools(app.api, name),
  );
  // Listing the tools started the server: read its state again once they are in.
  createEffect(
    on(
      () => tools.state === "ready",
      (ready) => {
        if (ready) {
          props.onStarted();
        }
      },
      { defer: true },
    ),
  );
  const status = () => statusWords(props.connector.status);
  const titleId = () => `connector-${props.connector.name}-title`;

  const act = async <T,>(action: () => Promise<T>, done: (value: T) => void) => {
    setBusy(true);
    setProblem(null);
    try {
      done(await action());
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };
  const setRisk = (tool: string, risk: ConnectorRisk | null) => {
    const config = withToolRisk(props.connector.config, tool, risk);
    const onChanged = props.onChanged;
    void act(
      () => saveConnector(app.api, config, null),
      (info) => {
        onChanged(info);
        void refetchTools();
      },
    );
  };
  // A disabled connector cannot be started for its tools; its test lists them.
  const shownTools = (): ConnectorToolInfo[] | undefined => {
    if (!props.connector.enabled) {
      return report()?.tools;
    }
    // `latest` of a failed resource throws: read it only once it holds a value.
    return tools.state === "ready" || tools.state === "refreshing" ? tools.latest : undefined;
  };

  return (
    <li class="card connector-card" aria-labelledby={titleId()}>
      <div class="connector-head">
        <Icon name="plug" class="connector-icon" />
        <div class="connector-heading">
          <h2 class="card-title" id={titleId()}>
            {props.connector.name}
          </h2>
          <code class="connector-target" title={props.connector.target}>
            {props.connector.target}
          </code>
        </div>
        <div class="connector-state">
          <Badge tone="neutral">{transportWords(props.connector.transport)}</Badge>
          <Badge tone={status().tone} title={status().title}>
            {status().label}
          </Badge>
          <Toggle
            checked={props.connector.enabled}
            label={`Offer ${props.connector.name} to sessions`}
            hideLabel
            disabled={busy()}
            onChange={(on) => {
              const name = props.connector.name;
              void act(() => setConnectorEnabled(app.api, name, on), props.onChanged);
            }}
          />
        </div>
      </div>
      <Show when={props.connector.reason}>
        {(reason) => (
          <p class="notice notice-danger">
            <Icon name="alert" />
            <span>{reason()}</span>
          </p>
        )}
      </Show>
      <dl class="facts connector-facts">
        <dt>Sends</dt>
        <dd>
          <Show when={props.connector.sends.length > 0} fallback={<span class="muted">nothing beyond the safe defaults</span>}>
            <ul class="chips" aria-label={`What ${props.connector.name} sends`}>
              <For each={props.connector.sends}>
                {(sent) => (
                  <li class="chip" title={sent.carries_token ? "Carries the token from the key store" : undefined}>
                    <span class="chip-text mono-small">{sent.name}</span>
                    <Show when={sent.carries_token}>
                      <Icon name="key" size={12} />
                      <span class="visually-hidden">(carries the token)</span>
                    </Show>
                  </li>
                )}
              </For>
            </ul>
          </Show>
        </dd>
        <dt>Tools</dt>
        <dd>
          {props.connector.status === "running" || props.connector.tools > 0
            ? `${props.connector.tools} offered as mcp__${props.connector.name}__…`
            : "listed when it first starts"}
          <Show when={props.connector.restarts > 0}>
            <span class="muted">
              {" "}
              · restarted {props.connector.restarts} {props.connector.restarts === 1 ? "time" : "times"}
            </span>
          </Show>
        </dd>
      </dl>
      <div class="connector-actions">
        <Show when={props.connector.enabled}>
          <button
            type="button"
            class="button button-small"
            aria-expanded={showTools()}
            onClick={() => setShowTools(!showTools())}
          >
            <Icon name={showTools() ? "chevronDown" : "chevronRight"} size={13} />
            {showTools() ? "Hide tools" : "Show tools"}
            <span class="visually-hidden"> of {props.connector.name}</span>
          </button>
        </Show>
        <button
          type="button"
          class="button button-small"
          disabled={busy()}
          onClick={() => {
            const name = props.connector.name;
            const listed = props.connector.enabled && showTools();
            setReport(null);
            void act(
              () => testConnector(app.api, name),
              (result) => {
                setReport(result);
                if (listed) {
                  setTools(result.tools);
                }
              },
            );
          }}
        >
          <Icon name="refresh" size={13} />
          {busy() ? "Working…" : "Test"}
          <span class="visually-hidden"> {props.connector.name}</span>
        </button>
        <button type="button" class="button button-small button-ghost" onClick={() => { props.onEdit(); }}>
          <Icon name="edit" size={13} />
          Edit<span class="visually-hidden"> {props.connector.name}</span>
        </button>
        <button type="button" class="button button-small button-danger-ghost" onClick={() => { props.onRemove(); }}>
          <Icon name="trash" size={13} />
          Remove<span class="visually-hidden"> {props.connector.name}</span>
        </button>
      </div>
      <Show when={report()}>
        {(result) => (
          <p class={`notice ${result().ok ? "notice-ok" : "notice-danger"}`} role="status">
            <Icon name={result().ok ? "check" : "alert"} />
            <span>
              <strong>{result().ok ? "The test passed" : "The test failed"}</strong>: {result().detail}
            </span>
          </p>
        )}
      </Show>
      <ProblemNotice text={problem()} />
      <Show when={(props.connector.enabled && showTools()) || (!props.connector.enabled && (report()?.tools.length ?? 0) > 0)}>
        <div class="connector-tools-panel">
          <Switch>
            <Match when={props.connector.enabled && tools.state === "errored"}>
              <ErrorState
                error={tools.error as unknown}
                title={`The tools of ${props.connector.name} could not be listed`}
                onRetry={() => void refetchTools()}
              />
            </Match>
            <Match when={shownTools()}>
              {(list) => (
                <ConnectorTools
                  connector={props.connector.name}
                  config={props.connector.config}
                  tools={list()}
                  busy={busy()}
                  onRisk={setRisk}
                />
              )}
            </Match>
            <Match when={true}>
              <Loading label={`Starting ${props.connector.name} to list its tools…`} />
            </Match>
          </Switch>
        </div>
      </Show>
    </li>
  );
}
