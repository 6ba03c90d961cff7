import type { KeyRequest } from "@server/KeyRequest";
import type { KeySaved } from "@server/KeySaved";
import type { KeyStoreStatus } from "@server/KeyStoreStatus";
import type { ModelCheck } from "@server/ModelCheck";
import type { ModelProvider } from "@server/ModelProvider";
import type { SecretRequest } from "@server/SecretRequest";
import type { ApiClient } from "./client";

/** Models and keys: providers, the key store, storing a key or a secret, a connection test. */

export function providers(api: ApiClient): Promise<ModelProvider[]> {
  return api.get<ModelProvider[]>("/v1/models/providers");
}

export function keyStore(api: ApiClient): Promise<KeyStoreStatus> {
  return api.get<KeyStoreStatus>("/v1/models/key-store");
}

/**
 * Tests a provider's key against its API and stores it in the configured key store (a key the
 * API refuses is not stored: the error says so); the key never comes back.
 */
export function storeKey(api: ApiClient, provider: string, key: string): Promise<KeySaved> {
  const body: KeyRequest = { key, check: true };
  return api.put<KeySaved>(`/v1/models/keys/${encodeURIComponent(provider)}`, { body });
}

export function testModel(api: ApiClient): Promise<ModelCheck> {
  return api.post<ModelCheck>("/v1/models/test");
}

/** Stores the value of a secret offered to sessions. */
export function storeSecret(api: ApiClient, name: string, value: string): Promise<void> {
  const body: SecretRequest = { value };
  return api.put<undefined>(`/v1/secrets/${encodeURIComponent(name)}`, { body });
}
