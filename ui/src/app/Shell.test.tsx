import type { PendingApproval } from "@server/PendingApproval";
import type { ProviderKind } from "@server/ProviderKind";
import { MemoryRouter, Route } from "@solidjs/router";
import { cleanup, render, screen } from "@solidjs/testing-library";
import { createSignal } from "solid-js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../api/client";
import { type AppState, AppProvider } from "./context";
import { Shell } from "./Shell";
import { createThemeStore } from "./theme";

afterEach(cleanup);

function pending(callId: string): PendingApproval {
  return {
    session_id: "s1",
    call_id: callId,
    tool: "run_bash",
    args: { command: "cargo test" },
    summary: "cargo test",
    reason: "ask mode asks before commands",
    lasting_allowed: true,
    seq: 3,
    asked_ms: 1_700_000_000_000,
  };
}

function appState(desktop = false) {
  const [approvals, setApprovals] = createSignal<PendingApproval[]>([]);
  const [provider, setProvider] = createSignal<ProviderKind | null>(null);
  const state: AppState = {
    // Nothing listens there: the shell's background reads fail quietly, as they would offline.
    api: new ApiClient({ baseUrl: "http://127.0.0.1:1", token: () => "t" }),
    token: () => "t",
    desktop,
    refusal: () => null,
    signIn: () => undefined,
    signOut: () => undefined,
    theme: createThemeStore(localStorage, document.createElement("html")),
    pending: approvals,
    inboxStatus: () => ({ loaded: true, error: null }),
    refreshInbox: () => undefined,
    provider,
    refreshMachine: () => undefined,
  };
  return { state, setApprovals, setProvider };
}

function renderShell(state: AppState) {
  render(() => (
    <AppProvider state={state}>
      <MemoryRouter root={Shell}>
        <Route path="*" component={() => <h1>page</h1>} />
      </MemoryRouter>
    </AppProvider>
  ));
}

describe("Shell", () => {
  it("shows the pending-approvals count beside Inbox, read out with the link", () => {
    const { state, setApprovals } = appState();
    renderShell(state);
    expect(screen.getByRole("link", { name: "Inbox" })).toBeTruthy();
    setApprovals([pending("a"), pending("b"), pending("c"), pending("d")]);
    expect(screen.getByRole("link", { name: /^Inbox\s*,\s*4 pending approvals$/ })).toBeTruthy();
  });

  it("labels every control and warns in direct mode", () => {
    const { state, setProvider } = appState();
    renderShell(state);
    for (const name of ["System", "Light", "Dark"]) {
      expect(screen.getByRole("radio", { name })).toBeTruthy();
    }
    expect(screen.getByRole("button", { name: "Sign out" })).toBeTruthy();
    expect(screen.queryByRole("region", { name: "No sandbox" })).toBeNull();
    setProvider("direct");
    expect(screen.getByRole("region", { name: "No sandbox" })).toBeTruthy();
  });

  it("lists Sandbox, Models and Connectors under Settings", () => {
    renderShell(appState().state);
    const settings = screen.getByRole("list", { name: "Settings" });
    expect([...settings.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
      ["Sandbox", "/settings/sandbox"],
      ["Models", "/settings/models"],
      ["Connectors", "/settings/connectors"],
    ]);
  });

  it("offers no sign-out in the desktop app, which signs itself in", () => {
    renderShell(appState(true).state);
    expect(screen.queryByRole("button", { name: "Sign out" })).toBeNull();
  });
});
