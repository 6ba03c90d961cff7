import { createSignal } from "solid-js";

/** The user's choice; `system` follows the operating system's light or dark preference. */
export type ThemePreference = "system" | "light" | "dark";

const STORAGE_KEY = "paddock.theme";

export const THEME_CHOICES: readonly { value: ThemePreference; label: string }[] = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

export function parsePreference(stored: string | null): ThemePreference {
  return stored === "light" || stored === "dark" ? stored : "system";
}

/**
 * Applies a preference to the document: `system` removes the attribute so the stylesheet's
 * `prefers-color-scheme` decides; `light`/`dark` pin it.
 */
export function applyPreference(root: HTMLElement, preference: ThemePreference): void {
  if (preference === "system") {
    root.removeAttribute("data-theme");
  } else {
    root.setAttribute("data-theme", preference);
  }
}

/** The theme preference as a signal, persisted in local storage and applied to `<html>`. */
export function createThemeStore(storage: Storage, root: HTMLElement) {
  const [preference, setPreferenceSignal] = createSignal(
    parsePreference(storage.getItem(STORAGE_KEY)),
  );
  applyPreference(root, preference());
  const setPreference = (next: ThemePreference) => {
    setPreferenceSignal(next);
    if (next === "system") {
      storage.removeItem(STORAGE_KEY);
    } else {
      storage.setItem(STORAGE_KEY, next);
    }
    applyPreference(root, next);
  };
  return { preference, setPreference };
}

export type ThemeStore = ReturnType<typeof createThemeStore>;
