import type { ProviderKind } from "@protocol/ProviderKind";
import { createContext, createSignal, type JSX, useContext } from "solid-js";
import { ApiClient } from "../api/client";
import { adoptTokenFromLocation, forgetToken, saveToken } from "../api/credentials";
import type { ApiError } from "../api/errors";
import { createThemeStore, type ThemeStore } from "./theme";

/** What every page may use: the API client, the sign-in state, the theme, the inbox count. */
export interface AppState {
  api: ApiClient;
  token: () => string | null;
  /** Why the last token was dropped (the server refused it), shown on the sign-in form. */
  refusal: () => ApiError | null;
  signIn: (token: string) => void;
  signOut: () => void;
  theme: ThemeStore;
  /** Pending approvals across every session, shown beside Inbox in the navigation. */
  inboxCount: () => number;
  setInboxCount: (count: number) => void;
  /** The machine's configured wall, once known; `direct` puts a warning on every page. */
  provider: () => ProviderKind | null;
  setProvider: (provider: ProviderKind | null) => void;
}

const AppContext = createContext<AppState>();

/** The browser-backed app state: same-origin API, token in local storage. */
export function createBrowserAppState(): AppState {
  const storage = window.localStorage;
  const [token, setToken] = createSignal(
    adoptTokenFromLocation(window.location, window.history, storage),
  );
  // An address with `#token=…` pasted into an open tab changes only the fragment: no reload.
  window.addEventListener("hashchange", () => {
    const adopted = adoptTokenFromLocation(window.location, window.history, storage);
    if (adopted !== token()) {
      setRefusal(null);
      setToken(adopted);
    }
  });
  const [refusal, setRefusal] = createSignal<ApiError | null>(null);
  const [inboxCount, setInboxCount] = createSignal(0);
  const [provider, setProvider] = createSignal<ProviderKind | null>(null);
  const api = new ApiClient({
    baseUrl: window.location.origin,
    token,
    onUnauthorized: (error) => {
      forgetToken(storage);
      setRefusal(error);
      setToken(null);
    },
  });
  return {
    api,
    token,
    refusal,
    signIn: (next) => {
      saveToken(storage, next);
      setRefusal(null);
      setToken(next.trim());
    },
    signOut: () => {
      forgetToken(storage);
      setToken(null);
    },
    theme: createThemeStore(storage, document.documentElement),
    inboxCount,
    setInboxCount,
    provider,
    setProvider,
  };
}

export function AppProvider(props: { state: AppState; children: JSX.Element }): JSX.Element {
  // The state object is made once at start; what changes inside it are signals.
  // eslint-disable-next-line solid/reactivity
  return <AppContext.Provider value={props.state}>{props.children}</AppContext.Provider>;
}

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) {
    throw new Error("useApp() used outside <AppProvider>");
  }
  return state;
}
