/**
 * The access token of `paddock up`. The address it prints carries the token in the fragment
 * (`#token=…`), which browsers never send to a server or put in a `Referer`; the UI moves it at
 * once into this tab's session storage and removes it from the address bar and history. The
 * desktop app gets its token from its own process instead (see `app/connection.ts`).
 */

const STORAGE_KEY = "paddock.token";

export interface TokenStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The token in `hash` (`#token=…`), if any. */
export function tokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const token = params.get("token")?.trim();
  return token ? token : null;
}

export function readToken(store: TokenStore): string | null {
  return store.getItem(STORAGE_KEY);
}

export function saveToken(store: TokenStore, token: string): void {
  store.setItem(STORAGE_KEY, token.trim());
}

export function forgetToken(store: TokenStore): void {
  store.removeItem(STORAGE_KEY);
}

/**
 * Takes a token from the current location's fragment into `store` and strips it from the URL,
 * so it is neither bookmarked nor kept in history. Returns the token now stored, if any.
 */
export function adoptTokenFromLocation(
  location: Pick<Location, "hash" | "pathname" | "search">,
  history: Pick<History, "replaceState">,
  store: TokenStore,
): string | null {
  const token = tokenFromFragment(location.hash);
  if (token) {
    saveToken(store, token);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return readToken(store);
}
