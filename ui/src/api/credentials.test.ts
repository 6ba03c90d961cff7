import { describe, expect, it, vi } from "vitest";
import { adoptTokenFromLocation, forgetToken, readToken, tokenFromFragment } from "./credentials";

function memoryStore() {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => items.set(key, value),
    removeItem: (key: string) => items.delete(key),
  };
}

describe("credentials", () => {
  it("reads the token from the fragment only", () => {
    expect(tokenFromFragment("#token=abc123")).toBe("abc123");
    expect(tokenFromFragment("#other=1&token=%20xyz%20")).toBe("xyz");
    expect(tokenFromFragment("#token=")).toBeNull();
    expect(tokenFromFragment("")).toBeNull();
  });

  it("moves a fragment token into the store and strips it from the address bar", () => {
    const store = memoryStore();
    const replaceState = vi.fn();
    const token = adoptTokenFromLocation(
      { hash: "#token=abc123", pathname: "/sessions", search: "?q=1" },
      { replaceState },
      store,
    );
    expect(token).toBe("abc123");
    expect(readToken(store)).toBe("abc123");
    expect(replaceState).toHaveBeenCalledWith(null, "", "/sessions?q=1");
  });

  it("keeps the stored token when the URL has none, and forgets it on request", () => {
    const store = memoryStore();
    store.setItem("paddock.token", "kept");
    const replaceState = vi.fn();
    expect(
      adoptTokenFromLocation({ hash: "", pathname: "/", search: "" }, { replaceState }, store),
    ).toBe("kept");
    expect(replaceState).not.toHaveBeenCalled();
    forgetToken(store);
    expect(readToken(store)).toBeNull();
  });
});
