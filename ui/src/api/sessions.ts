import type { Accepted } from "@server/Accepted";
import type { FolderAccess } from "@server/FolderAccess";
import type { GrantRequest } from "@server/GrantRequest";
import type { NewSession } from "@server/NewSession";
import type { ProviderKind } from "@server/ProviderKind";
import type { ResumeRequest } from "@server/ResumeRequest";
import type { RevokeRequest } from "@server/RevokeRequest";
import type { SessionInfo } from "@server/SessionInfo";
import type { Ticket } from "@server/Ticket";
import type { TurnRequest } from "@server/TurnRequest";
import type { ApiClient } from "./client";
import { EventStream, type EventStreamOptions, webSocketUrl } from "./events";

/** Sessions: list, create, show, resume, close; turns and interrupts; live folder grants. */

const path = (id: string, rest = "") => `/v1/sessions/${encodeURIComponent(id)}${rest}`;

export function listSessions(api: ApiClient, signal?: AbortSignal): Promise<SessionInfo[]> {
  return api.get<SessionInfo[]>("/v1/sessions", signal ? { signal } : {});
}

export function getSession(api: ApiClient, id: string): Promise<SessionInfo> {
  return api.get<SessionInfo>(path(id));
}

export function createSession(api: ApiClient, request: NewSession): Promise<SessionInfo> {
  return api.post<SessionInfo>("/v1/sessions", { body: request });
}

export function resumeSession(
  api: ApiClient,
  id: string,
  provider: ProviderKind | null = null,
): Promise<SessionInfo> {
  const body: ResumeRequest = { provider };
  return api.post<SessionInfo>(path(id, "/resume"), { body });
}

export function closeSession(api: ApiClient, id: string): Promise<SessionInfo> {
  return api.post<SessionInfo>(path(id, "/close"));
}

export function sendTurn(api: ApiClient, id: string, text: string): Promise<Accepted> {
  const body: TurnRequest = { text };
  return api.post<Accepted>(path(id, "/turns"), { body });
}

export function interrupt(api: ApiClient, id: string): Promise<void> {
  return api.post<undefined>(path(id, "/interrupt"));
}

/** Grants a folder to a running session: its sandbox is rebuilt (shell state is lost). */
export function grantFolder(
  api: ApiClient,
  id: string,
  folder: string,
  access: FolderAccess,
): Promise<void> {
  const body: GrantRequest = { path: folder, access };
  return api.post<undefined>(path(id, "/folders"), { body });
}

/** Takes a folder away from a running session: its sandbox is rebuilt. */
export function revokeFolder(api: ApiClient, id: string, folder: string): Promise<void> {
  const body: RevokeRequest = { path: folder };
  return api.post<undefined>(path(id, "/folders/revoke"), { body });
}

/**
 * A session's events: the logged ones after `after`, then live. Each connection first asks for
 * a single-use ticket with the token (`POST …/events/ticket`) and opens the socket with it.
 */
export function sessionEvents(
  api: ApiClient,
  id: string,
  options: Omit<EventStreamOptions, "url">,
): EventStream {
  return new EventStream({
    ...options,
    url: async (after) => {
      const ticket = await api.post<Ticket>(path(id, "/events/ticket"));
      return webSocketUrl(
        api.url(path(id, "/events"), { after, ticket: ticket.ticket }),
      );
    },
  });
}
