import { describe, expect, it } from "vitest";
import { createThemeStore, parsePreference } from "./theme";

describe("theme", () => {
  it("defaults to the system preference for missing or unknown values", () => {
    expect(parsePreference(null)).toBe("system");
    expect(parsePreference("sepia")).toBe("system");
    expect(parsePreference("dark")).toBe("dark");
  });

  it("pins the chosen theme on <html>, persists it, and lets the system decide again", () => {
    localStorage.clear();
    const root = document.createElement("html");
    const store = createThemeStore(localStorage, root);
    expect(root.hasAttribute("data-theme")).toBe(false);

    store.setPreference("dark");
    expect(root.getAttribute("data-theme")).toBe("dark");
    expect(localStorage.getItem("paddock.theme")).toBe("dark");

    const reopened = createThemeStore(localStorage, document.createElement("html"));
    expect(reopened.preference()).toBe("dark");

    store.setPreference("system");
    expect(root.hasAttribute("data-theme")).toBe(false);
    expect(localStorage.getItem("paddock.theme")).toBeNull();
  });
});
