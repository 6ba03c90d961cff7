import type { CredentialEntryRequest } from "@server/CredentialEntryRequest";
import type { CredentialRow } from "@server/CredentialRow";
import type { SettingValue } from "@server/SettingValue";
import type { SettingsUpdate } from "@server/SettingsUpdate";
import type { SettingsView } from "@server/SettingsView";
import type { ApiClient } from "./client";

/** The machine's settings (written back to its config file keeping comments). */

export function readSettings(api: ApiClient): Promise<SettingsView> {
  return api.get<SettingsView>("/v1/settings");
}

/** Changes settings as a whole; `invalid_setting` names the key and nothing is written. */
export function updateSettings(
  api: ApiClient,
  changes: Record<string, SettingValue>,
): Promise<SettingsView> {
  const body: SettingsUpdate = { changes };
  return api.patch<SettingsView>("/v1/settings", { body });
}

/** Adds or changes a custom credential-share entry; `invalid_request` names the field. */
export function saveCredential(
  api: ApiClient,
  name: string,
  entry: CredentialEntryRequest,
): Promise<CredentialRow[]> {
  return api.put<CredentialRow[]>(`/v1/settings/credentials/${encodeURIComponent(name)}`, {
    body: entry,
  });
}

export function removeCredential(api: ApiClient, name: string): Promise<CredentialRow[]> {
  return api.delete<CredentialRow[]>(`/v1/settings/credentials/${encodeURIComponent(name)}`);
}

/** A setting's value as text (`null` when unset or a list). */
export function textSetting(view: SettingsView, key: string): string | null {
  const value = view.values[key];
  return typeof value === "string" ? value : null;
}

/** A setting's value as a list (empty when unset or text). */
export function listSetting(view: SettingsView, key: string): string[] {
  const value = view.values[key];
  return Array.isArray(value) ? value : [];
}
