import type { Connection } from "@server/Connection";

/**
 * Where the API is. In a browser: the server that served the page (`paddock up`). In the
 * desktop app: the server its own process runs on loopback, with a token made for this launch
 * that it hands only to its main window (the `connection` command, the one IPC command the
 * window may call).
 */
export type Where =
  | { kind: "browser"; baseUrl: string }
  | { kind: "desktop"; connection: Connection }
  | { kind: "desktop-failed"; message: string };

/** True inside the desktop app's webview (Tauri injects its IPC bridge). */
export function inDesktopApp(global: object = window): boolean {
  return "__TAURI_INTERNALS__" in global;
}

export async function findServer(): Promise<Where> {
  if (!inDesktopApp()) {
    return { kind: "browser", baseUrl: window.location.origin };
  }
  const { invoke } = await import("@tauri-apps/api/core");
  try {
    return { kind: "desktop", connection: await invoke<Connection>("connection") };
  } catch (error) {
    return {
      kind: "desktop-failed",
      message: typeof error === "string" ? error : error instanceof Error ? error.message : String(error),
    };
  }
}
