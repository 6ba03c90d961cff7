import type { ConnectorConfig } from "@server/ConnectorConfig";
import type { ConnectorRisk } from "@server/ConnectorRisk";
import type { ConnectorToolInfo } from "@server/ConnectorToolInfo";
import { For, type JSX, Show } from "solid-js";
import { Badge } from "../../../components/Badge";
import { asRisk, RISK_WORDS } from "./words";

/**
 * The risk a tool has without a setting of its own: the connector's `*` setting, else the
 * stricter of the default (`write`) and what the server claims (a claim never lowers it).
 */
export function defaultRisk(config: ConnectorConfig, tool: ConnectorToolInfo): ConnectorRisk {
  const every = config.risk?.["*"];
  if (every) {
    return every;
  }
  return asRisk(tool.claimed_risk) === "destructive" ? "destructive" : "write";
}

function RiskBadge(props: { risk: string }): JSX.Element {
  const known = () => asRisk(props.risk);
  return (
    <Show when={known()} fallback={<Badge tone="neutral">{props.risk}</Badge>}>
      {(risk) => <Badge tone={RISK_WORDS[risk()].tone}>{RISK_WORDS[risk()].label}</Badge>}
    </Show>
  );
}

/**
 * A server's tools as Paddock offers them: the server's name, the name the model sees (or why
 * the tool is not offered), what the server claims, and the risk in force, which the user sets
 * here per tool (only this machine's settings can lower a risk).
 */
export function ConnectorTools(props: {
  connector: string;
  config: ConnectorConfig;
  tools: ConnectorToolInfo[];
  busy: boolean;
  onRisk: (tool: string, risk: ConnectorRisk | null) => void;
}): JSX.Element {
  return (
    <Show
      when={props.tools.length > 0}
      fallback={<p class="muted card-empty">The server lists no tools.</p>}
    >
      <div class="table-wrap">
        <table class="table table-compact connector-tools" aria-label={`Tools of ${props.connector}`}>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">The model sees</th>
              <th scope="col">Server claims</th>
              <th scope="col">Risk</th>
            </tr>
          </thead>
          <tbody>
            <For each={props.tools}>
              {(tool) => {
                const own = () => props.config.risk?.[tool.name] ?? "";
                return (
                  <tr>
                    <td>
                      <span class="cell-title-text">{tool.name}</span>
                      <Show when={tool.description}>
                        <span class="cell-sub">{tool.description}</span>
                      </Show>
                    </td>
                    <td>
                      <Show
                        when={tool.model_name}
                        fallback={<span class="muted">Not offered: {tool.not_offered ?? "its name does not fit"}</span>}
                      >
                        {(name) => <code>{name()}</code>}
                      </Show>
                    </td>
                    <td>
                      <RiskBadge risk={tool.claimed_risk} />
                    </td>
                    <td>
                      <div class="connector-risk">
                        <RiskBadge risk={tool.risk} />
                        <select
                        class="select select-inline"
                        aria-label={`Risk of ${tool.name}`}
                        value={own()}
                        disabled={props.busy}
                        onChange={(event) => {
                          props.onRisk(tool.name, asRisk(event.currentTarget.value));
                        }}
                      >
                        <option value="">Default ({RISK_WORDS[defaultRisk(props.config, tool)].label.toLowerCase()})</option>
                        <option value="read">Read</option>
                        <option value="write">Write</option>
                        <option value="destructive">Destructive</option>
                        </select>
                      </div>
                    </td>
                  </tr>
                );
              }}
            </For>
          </tbody>
        </table>
      </div>
      <p class="field-hint connector-risk-hint">
        Read and write calls ask, and a session or always answer covers the same call again;
        destructive calls ask every time. A server's own claims only ever make a tool stricter:
        lowering one is yours to do, here.
      </p>
    </Show>
  );
}
