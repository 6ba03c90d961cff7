import type { AllowHostRequest } from "@server/AllowHostRequest";
import type { DeniedConnection } from "@server/DeniedConnection";
import type { DraftedRule } from "@server/DraftedRule";
import type { HostScope } from "@server/HostScope";
import type { RuleDecisionRequest } from "@server/RuleDecisionRequest";
import type { ApiClient } from "./client";

/** A session's network: what its wall refused, drafted rules (OpenShell), allowing a host. */

const path = (id: string, rest: string) => `/v1/sessions/${encodeURIComponent(id)}/network${rest}`;

export function denials(api: ApiClient, sessionId: string): Promise<DeniedConnection[]> {
  return api.get<DeniedConnection[]>(path(sessionId, "/denials"));
}

/** OpenShell's drafted rules; other walls answer `unsupported`. */
export function draftedRules(api: ApiClient, sessionId: string): Promise<DraftedRule[]> {
  return api.get<DraftedRule[]>(path(sessionId, "/rules"));
}

export function decideRule(
  api: ApiClient,
  sessionId: string,
  ruleId: string,
  approve: boolean,
  reason: string | null = null,
): Promise<DraftedRule> {
  const body: RuleDecisionRequest = { approve, reason };
  return api.post<DraftedRule>(path(sessionId, `/rules/${encodeURIComponent(ruleId)}`), { body });
}

/** Allows a host for the rest of the session, or on this machine from now on. */
export function allowHost(
  api: ApiClient,
  sessionId: string,
  host: string,
  scope: HostScope,
): Promise<void> {
  const body: AllowHostRequest = { host, scope };
  return api.post<undefined>(path(sessionId, "/allow"), { body });
}
