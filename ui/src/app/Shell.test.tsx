import type { ProviderKind } from "@protocol/ProviderKind";
import { MemoryRouter, Route } from "@solidjs/router";
import { cleanup, render, screen } from "@solidjs/testing-library";
import { createSignal } from "solid-js";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../api/client";
import { type AppState, AppProvider } from "./context";
import { Shell } from "./Shell";
import { createThemeStore } from "./theme";

afterEach(cleanup);

function appState(): AppState {
  const [inboxCount, setInboxCount] = createSignal(0);
  const [provider, setProvider] = createSignal<ProviderKind | null>(null);
  return {
    api: new ApiClient({ baseUrl: "http://127.0.0.1:1", token: () => "t" }),
    token: () => "t",
    refusal: () => null,
    signIn: () => undefined,
    signOut: () => undefined,
    theme: createThemeStore(localStorage, document.createElement("html")),
    inboxCount,
    setInboxCount,
    provider,
    setProvider,
  };
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
    const state = appState();
    renderShell(state);
    expect(screen.getByRole("link", { name: "Inbox" })).toBeTruthy();
    state.setInboxCount(4);
    expect(screen.getByRole("link", { name: /^Inbox\s*,\s*4 pending approvals$/ })).toBeTruthy();
  });

  it("labels every control and warns in direct mode", () => {
    const state = appState();
    renderShell(state);
    for (const name of ["System", "Light", "Dark"]) {
      expect(screen.getByRole("radio", { name })).toBeTruthy();
    }
    expect(screen.getByRole("button", { name: "Sign out" })).toBeTruthy();
    expect(screen.queryByRole("region", { name: "No sandbox" })).toBeNull();
    state.setProvider("direct");
    expect(screen.getByRole("region", { name: "No sandbox" })).toBeTruthy();
  });
});
