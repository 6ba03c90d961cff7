/**
 * The access token `paddock up` prints. It arrives in the URL's fragment (`#token=…`, never sent
 * to the server and never in a query string), is moved at once into this origin's local storage,
 * and removed from the address bar and history.
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
