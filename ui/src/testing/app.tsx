import type { PendingApproval } from "@server/PendingApproval";
import type { ProviderKind } from "@server/ProviderKind";
import { MemoryRouter, Route } from "@solidjs/router";
import { render } from "@solidjs/testing-library";
import { createSignal, type JSX } from "solid-js";
import { ApiClient } from "../api/client";
import { type AppState, AppProvider, type InboxStatus } from "../app/context";
import { createThemeStore } from "../app/theme";

/** A request the scripted server saw. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

/** Answers a request: a value (sent as JSON with status 200), or a `Response`. */
export type Answer = (request: SeenRequest) => unknown;

/**
 * An `AppState` whose API client talks to a scripted fetch (unit tests only): `routes` maps
 * `"METHOD /path"` to what that request answers. Every request is recorded in `seen`.
 */
export function scriptedApp(routes: Record<string, Answer> = {}) {
  const seen: SeenRequest[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const method = init?.method ?? "GET";
    const body: unknown = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    const request = { method, path: url.pathname, query: url.searchParams, body };
    seen.push(request);
    const route = routes[`${method} ${url.pathname}`];
    if (!route) {
      return Promise.resolve(
        Response.json({ code: "not_found", message: `no route ${method} ${url.pathname}` }, { status: 404 }),
      );
    }
    const answer = route(request);
    return Promise.resolve(answer instanceof Response ? answer : Response.json(answer ?? null));
  };
  const [pending, setPending] = createSignal<PendingApproval[]>([]);
  const [inboxStatus, setInboxStatus] = createSignal<InboxStatus>({ loaded: true, error: null });
  const [provider, setProvider] = createSignal<ProviderKind | null>(null);
  let inboxReads = 0;
  const state: AppState = {
    api: new ApiClient({ baseUrl: "http://127.0.0.1:8420", token: () => "t", fetch }),
    token: () => "t",
    desktop: false,
    refusal: () => null,
    signIn: () => undefined,
    signOut: () => undefined,
    theme: createThemeStore(localStorage, document.createElement("html")),
    pending,
    inboxStatus,
    refreshInbox: () => {
      inboxReads += 1;
    },
    provider,
    refreshMachine: () => undefined,
  };
  return {
    state,
    seen,
    setPending,
    setInboxStatus,
    setProvider,
    inboxReads: () => inboxReads,
  };
}

/** Renders `view` inside the app's context and a router (components that link need one). */
export function renderInApp(state: AppState, view: () => JSX.Element) {
  return render(() => (
    <AppProvider state={state}>
      <MemoryRouter>
        <Route path="*" component={view} />
      </MemoryRouter>
    </AppProvider>
  ));
}

/** An API error answer. */
export function errorAnswer(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status });
}
