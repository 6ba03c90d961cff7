import type { AuditParams } from "@server/AuditParams";
import type { Page } from "@server/Page";
import type { VerifyReport } from "@server/VerifyReport";
import type { ApiClient } from "./client";

/** The audit trail: filtered pages (newest first, keyset cursors), export, chain check. */

/** The filters of a query, as the API names them (every one it has). */
export type AuditFilters = Omit<AuditParams, "limit" | "cursor" | "format">;

function query(filters: AuditFilters): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  for (const [key, value] of Object.entries(filters) as [string, unknown][]) {
    if (typeof value === "number" || (typeof value === "string" && value.trim() !== "")) {
      out[key] = typeof value === "string" ? value.trim() : value;
    }
  }
  return out;
}

export function auditPage(
  api: ApiClient,
  filters: AuditFilters,
  limit: number,
  cursor: string | null,
  signal?: AbortSignal,
): Promise<Page> {
  return api.get<Page>("/v1/audit", {
    query: { ...query(filters), limit, cursor: cursor ?? undefined },
    ...(signal ? { signal } : {}),
  });
}

export function verifyChain(api: ApiClient): Promise<VerifyReport> {
  return api.get<VerifyReport>("/v1/audit/verify");
}

/** The filtered trail as a file (oldest first): JSONL with its hashes, or OCSF events. */
export async function exportAudit(
  api: ApiClient,
  filters: AuditFilters,
  format: "jsonl" | "ocsf",
): Promise<Blob> {
  const response = await api.send("GET", "/v1/audit/export", {
    query: { ...query(filters), format },
  });
  return await response.blob();
}
