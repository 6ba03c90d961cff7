import { createRoot } from "solid-js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/errors";
import type { PendingApproval } from "@server/PendingApproval";
import { createDesktopAppState, mergePending } from "./context";

afterEach(() => {
  vi.unstubAllGlobals();
});

/** An approval of session s1 waiting for an answer. */
const waiting = (call: string, seq: number): PendingApproval => ({
  session_id: "s1",
  call_id: call,
  tool: "run_bash",
  args: { command: "ls" },
  summary: "ls",
  reason: "asks",
  lasting_allowed: true,
  seq,
  asked_ms: 1,
});

/** Lets the inbox read's promise chain settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("refreshInbox", () => {
  it("keeps a failed read apart from an empty inbox, and clears the failure on the next success", async () => {
    const answers: (() => Response)[] = [
      () => Response.json({ code: "internal", message: "the approvals store is locked" }, { status: 500 }),
      () =>
        Response.json([waiting("c1", 1)]),
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

describe("mergePending", () => {
  it("keeps the objects of approvals still waiting, and the list itself when nothing changed", () => {
    const shown = [waiting("c1", 1), waiting("c2", 2)];
    const again = mergePending(shown, [waiting("c1", 1), waiting("c2", 2)]);
    expect(again).toBe(shown);
    const next = mergePending(shown, [waiting("c2", 2), waiting("c3", 3)]);
    expect(next).toHaveLength(2);
    expect(next[0]).toBe(shown[1]);
    expect(next[1]).toEqual(waiting("c3", 3));
    expect(mergePending(shown, [])).toEqual([]);
    // The same call asked again later is a new approval.
    expect(mergePending(shown, [waiting("c1", 9)])[0]).not.toBe(shown[0]);
  });
});

describe("refreshInbox, read after read", () => {
  it("keeps showing the same approval objects while they wait, so an open prompt is not rebuilt", async () => {
    const one = waiting("c1", 1);
    const answers = [[one], [one], [one, waiting("c2", 2)]];
    vi.stubGlobal("fetch", () => Promise.resolve(Response.json(answers.shift() ?? [])));
    await createRoot(async (dispose) => {
      const app = createDesktopAppState({ base_url: "http://127.0.0.1:8420", token: "t" });
      app.refreshInbox();
      await settle();
      const first = app.pending()[0];
      const list = app.pending();
      app.refreshInbox();
      await settle();
      expect(app.pending()).toBe(list);
      app.refreshInbox();
      await settle();
      expect(app.pending().map((p) => p.call_id)).toEqual(["c1", "c2"]);
      expect(app.pending()[0]).toBe(first);
      dispose();
    });
  });
});
