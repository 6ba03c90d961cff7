import type { ApprovalDecision } from "@server/ApprovalDecision";
import type { DecisionRequest } from "@server/DecisionRequest";
import type { PendingApproval } from "@server/PendingApproval";
import type { StandingApproval } from "@server/StandingApproval";
import type { ApiClient } from "./client";

/** Approvals: the inbox across sessions, answers (the first wins), standing approvals. */

export function inbox(api: ApiClient): Promise<PendingApproval[]> {
  return api.get<PendingApproval[]>("/v1/approvals");
}

export function sessionApprovals(api: ApiClient, sessionId: string): Promise<PendingApproval[]> {
  return api.get<PendingApproval[]>(`/v1/sessions/${encodeURIComponent(sessionId)}/approvals`);
}

/** Answers a waiting call. `approval_not_pending` (409): another answer came first. */
export function decide(
  api: ApiClient,
  sessionId: string,
  callId: string,
  decision: ApprovalDecision,
): Promise<void> {
  const body: DecisionRequest = { decision };
  return api.post<undefined>(
    `/v1/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(callId)}`,
    { body },
  );
}

/** The machine's `always` approvals, or a stored session's `session` ones. */
export function standingApprovals(api: ApiClient, sessionId?: string): Promise<StandingApproval[]> {
  return api.get<StandingApproval[]>("/v1/approvals/standing", {
    query: { session: sessionId },
  });
}

export function revokeStanding(
  api: ApiClient,
  approvalId: string,
  sessionId?: string,
): Promise<StandingApproval> {
  return api.delete<StandingApproval>(
    `/v1/approvals/standing/${encodeURIComponent(approvalId)}`,
    { query: { session: sessionId } },
  );
}
