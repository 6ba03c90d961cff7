import type { FolderCheck } from "@server/FolderCheck";
import type { Health } from "@server/Health";
import type { MachineSandboxStatus } from "@server/MachineSandboxStatus";
import type { ProviderKind } from "@server/ProviderKind";
import type { SandboxCatalog } from "@server/SandboxCatalog";
import type { ApiClient } from "./client";

/** The machine: health, whether it can build a wall (and the fixes), what sandboxes offer. */

export function health(api: ApiClient): Promise<Health> {
  return api.get<Health>("/v1/health");
}

export function sandboxStatus(
  api: ApiClient,
  provider?: ProviderKind,
): Promise<MachineSandboxStatus> {
  return api.get<MachineSandboxStatus>("/v1/machine/sandbox", { query: { provider } });
}

export function sandboxCatalog(api: ApiClient): Promise<SandboxCatalog> {
  return api.get<SandboxCatalog>("/v1/machine/sandbox/catalog");
}

/** Whether a typed path names a folder that can be granted (and which, links resolved). */
export function checkFolder(api: ApiClient, path: string, signal?: AbortSignal): Promise<FolderCheck> {
  return api.get<FolderCheck>("/v1/machine/folder", {
    query: { path },
    ...(signal ? { signal } : {}),
  });
}
