import { createRoot } from "solid-js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/errors";
import { createDesktopAppState } from "./context";

afterEach(() => {
  vi.unstubAllGlobals();
});

/** Lets the inbox read's promise chain settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("refreshInbox", () => {
  it("keeps a failed read apart from an empty inbox, and clears the failure on the next success", async () => {
    const answers: (() => Response)[] = [
      () => Response.json({ code: "internal", message: "the approvals store is locked" }, { status: 500 }),
      () =>
        Response.json([
          {
            session_id: "s1",
            call_id: "c1",
            tool: "run_bash",
            args: {},
            summary: "ls",
            reason: "asks",
            lasting_allowed: true,
            seq: 1,
            asked_ms: 1,
          },
        ]),
      () => Response.json({ code: "internal", message: "locked again" }, { status: 500 }),
    ];
    vi.stubGlobal("fetch", () => Promise.resolve((answers.shift() ?? (() => Response.json([])))()));
    await createRoot(async (dispose) => {
      const app = createDesktopAppState({ base_url: "http://127.0.0.1:8420", token: "t" });
      expect(app.inboxStatus()).toEqual({ loaded: false, error: null });

      app.refreshInbox();
      await settle();
      expect(app.inboxStatus().loaded).toBe(false);
      expect((app.inboxStatus().error as ApiError).message).toBe("the approvals store is locked");
      expect(app.pending()).toEqual([]);

      app.refreshInbox();
      await settle();
      expect(app.inboxStatus()).toEqual({ loaded: true, error: null });
      expect(app.pending().map((p) => p.call_id)).toEqual(["c1"]);

      // A later failure keeps the list (and the count in the navigation) and says why.
      app.refreshInbox();
      await settle();
      expect(app.inboxStatus().loaded).toBe(true);
      expect(app.inboxStatus().error).toBeInstanceOf(ApiError);
      expect(app.pending().map((p) => p.call_id)).toEqual(["c1"]);
      dispose();
    });
  });
});
