import type { ConnectorConfig } from "@server/ConnectorConfig";
import type { ConnectorInfo } from "@server/ConnectorInfo";
import type { ConnectorRequest } from "@server/ConnectorRequest";
import type { ConnectorTestReport } from "@server/ConnectorTestReport";
import type { ConnectorToolInfo } from "@server/ConnectorToolInfo";
import type { ApiClient } from "./client";

/**
 * Connectors (MCP servers the host runs for the agent): list with status, add or replace (the
 * token goes to the key store and never comes back), remove, enable, disable, test, their tools.
 */

const path = (name: string, rest = "") => `/v1/connectors/${encodeURIComponent(name)}${rest}`;

export function listConnectors(api: ApiClient): Promise<ConnectorInfo[]> {
  return api.get<ConnectorInfo[]>("/v1/connectors");
}

/**
 * Adds the connector or replaces its `[[connectors]]` entry (written to the machine's config
 * file, keeping its comments). `token`, when given, is stored in the key store as the
 * connector's; `null` keeps the stored one. `invalid_setting` names the field that is wrong.
 */
export function saveConnector(
  api: ApiClient,
  config: ConnectorConfig,
  token: string | null,
): Promise<ConnectorInfo> {
  const body: ConnectorRequest = { config, token };
  return api.put<ConnectorInfo>(path(config.name), { body });
}

/**
 * Removes the connector: its entry leaves the machine's config file (comments kept), its
 * server stops, and its token is deleted from the key store.
 */
export async function removeConnector(api: ApiClient, name: string): Promise<void> {
  await api.delete<unknown>(path(name));
}

export function setConnectorEnabled(
  api: ApiClient,
  name: string,
  enabled: boolean,
): Promise<ConnectorInfo> {
  return api.post<ConnectorInfo>(path(name, enabled ? "/enable" : "/disable"));
}

/** Starts the connector apart from the running one, lists its tools, and stops it. */
export function testConnector(api: ApiClient, name: string): Promise<ConnectorTestReport> {
  return api.post<ConnectorTestReport>(path(name, "/test"));
}

/** The tools the server exposes, with the names the model sees and their risks (starts it). */
export function connectorTools(api: ApiClient, name: string): Promise<ConnectorToolInfo[]> {
  return api.get<ConnectorToolInfo[]>(path(name, "/tools"));
}
