import type { Connection } from "@server/Connection";
import type { PendingApproval } from "@server/PendingApproval";
import type { ProviderKind } from "@server/ProviderKind";
import { createContext, createSignal, type JSX, onCleanup, useContext } from "solid-js";
import { inbox } from "../api/approvals";
import { ApiClient } from "../api/client";
import { adoptTokenFromLocation, forgetToken, saveToken } from "../api/credentials";
import type { ApiError } from "../api/errors";
import { readSettings, textSetting } from "../api/settings";
import { createThemeStore, type ThemeStore } from "./theme";

/** What every page may use: the API client, the sign-in state, the theme, the inbox. */
export interface AppState {
  api: ApiClient;
  token: () => string | null;
  /** The desktop app signs itself in (its token never leaves its process); no sign-out. */
  desktop: boolean;
  /** Why the last token was dropped (the server refused it), shown on the sign-in form. */
  refusal: () => ApiError | null;
  signIn: (token: string) => void;
  signOut: () => void;
  theme: ThemeStore;
  /** Pending approvals across every session, kept current while signed in. */
  pending: () => PendingApproval[];
  /** Whether `pending` has been read yet, and why the last read failed (if it did). */
  inboxStatus: () => InboxStatus;
  /** Reads the inbox again now (after an answer, or when a session asks). */
  refreshInbox: () => void;
  /** The machine's configured wall, once known; `direct` puts a warning on every page. */
  provider: () => ProviderKind | null;
  /** Reads the machine's settings again (after Settings ▸ Sandbox changed them). */
  refreshMachine: () => void;
}

/**
 * Where the inbox stands: `loaded` once a read succeeded; `error` is the last read's failure
 * (cleared by the next success), so a failing inbox never reads as an empty one.
 */
export interface InboxStatus {
  loaded: boolean;
  error: unknown;
}

const AppContext = createContext<AppState>();

/** How often the inbox is read while the page is visible (approvals are in memory: cheap). */
const INBOX_INTERVAL_MS = 2500;

interface Parts {
  api: ApiClient;
  token: () => string | null;
  desktop: boolean;
  refusal: () => ApiError | null;
  signIn: (token: string) => void;
  signOut: () => void;
}

/**
 * The inbox after a read: an approval still waiting keeps the object the page already shows
 * (one call's approval never changes while it waits), so its prompt, with a deny reason being
 * typed, is not built anew at every read; an unchanged inbox keeps the previous list itself.
 */
export function mergePending(previous: PendingApproval[], read: PendingApproval[]): PendingApproval[] {
  const key = (p: PendingApproval) => `${p.session_id}\u0000${p.call_id}\u0000${String(p.seq)}`;
  const shown = new Map(previous.map((p) => [key(p), p]));
  const next = read.map((p) => shown.get(key(p)) ?? p);
  const same = next.length === previous.length && next.every((p, i) => p === previous[i]);
  return same ? previous : next;
}

function assemble(parts: Parts, storage: Storage): AppState {
  const [pending, setPending] = createSignal<PendingApproval[]>([]);
  const [inboxStatus, setInboxStatus] = createSignal<InboxStatus>({ loaded: false, error: null });
  const [provider, setProvider] = createSignal<ProviderKind | null>(null);
  const refreshInbox = () => {
    if (!parts.token()) {
      return;
    }
    inbox(parts.api).then(
      (list) => {
        setPending((previous) => mergePending(previous, list));
        setInboxStatus({ loaded: true, error: null });
      },
      (error: unknown) => {
        // The last list stays (the count too); the Inbox page shows the failure in place.
        setInboxStatus((last) => ({ loaded: last.loaded, error }));
      },
    );
  };
  const refreshMachine = () => {
    if (!parts.token()) {
      return;
    }
    readSettings(parts.api).then(
      (view) => setProvider(textSetting(view, "sandbox.provider") as ProviderKind | null),
      () => {
        // Settings ▸ Sandbox shows the error in place.
      },
    );
  };
  return {
    ...parts,
    theme: createThemeStore(storage, document.documentElement),
    pending,
    inboxStatus,
    refreshInbox,
    provider,
    refreshMachine,
  };
}

/** The browser's state: same-origin API, the token in this tab's session storage. */
export function createBrowserAppState(baseUrl = window.location.origin): AppState {
  const storage = window.sessionStorage;
  const [token, setToken] = createSignal(
    adoptTokenFromLocation(window.location, window.history, storage),
  );
  const [refusal, setRefusal] = createSignal<ApiError | null>(null);
  // An address with `#token=…` pasted into an open tab changes only the fragment: no reload.
  window.addEventListener("hashchange", () => {
    const adopted = adoptTokenFromLocation(window.location, window.history, storage);
    if (adopted !== token()) {
      setRefusal(null);
      setToken(adopted);
    }
  });
  const api = new ApiClient({
    baseUrl,
    token,
    onUnauthorized: (error) => {
      forgetToken(storage);
      setRefusal(error);
      setToken(null);
    },
  });
  return assemble(
    {
      api,
      token,
      desktop: false,
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
    },
    window.localStorage,
  );
}

/** The desktop app's state: the loopback server its own process runs, signed in for good. */
export function createDesktopAppState(connection: Connection): AppState {
  const token = () => connection.token;
  const api = new ApiClient({ baseUrl: connection.base_url, token });
  return assemble(
    {
      api,
      token,
      desktop: true,
      refusal: () => null,
      signIn: () => undefined,
      signOut: () => undefined,
    },
    window.localStorage,
  );
}

/**
 * Keeps the inbox and the machine's wall current while mounted: the inbox every few seconds
 * while the page is visible, and at once when it becomes visible again.
 */
export function useLiveMachineState(app: AppState): void {
  app.refreshInbox();
  app.refreshMachine();
  const timer = setInterval(() => {
    if (document.visibilityState === "visible") {
      app.refreshInbox();
    }
  }, INBOX_INTERVAL_MS);
  const onVisible = () => {
    if (document.visibilityState === "visible") {
      app.refreshInbox();
    }
  };
  document.addEventListener("visibilitychange", onVisible);
  onCleanup(() => {
    clearInterval(timer);
    document.removeEventListener("visibilitychange", onVisible);
  });
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
