import type { Event } from "@server/Event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "./errors";
import { EventStream, type SocketLike, type StreamState, webSocketUrl } from "./events";

/** A socket the test drives by hand: it records what was asked of it and fires its handlers. */
class ScriptedSocket implements SocketLike {
  onopen: SocketLike["onopen"] = null;
  onmessage: SocketLike["onmessage"] = null;
  onclose: SocketLike["onclose"] = null;
  onerror: SocketLike["onerror"] = null;
  closedWith: number | null = null;

  constructor(readonly url: string) {}

  open() {
    this.onopen?.({});
  }
  send(events: number[]) {
    for (const seq of events) {
      this.onmessage?.({ data: JSON.stringify(event(seq)) });
    }
  }
  drop(code = 1006, reason = "") {
    this.onclose?.({ code, reason });
  }
  close(code?: number) {
    this.closedWith = code ?? 1000;
  }
}

function event(seq: number): Event {
  return {
    seq,
    session_id: "s1",
    turn_id: null,
    time_ms: 1_700_000_000_000 + seq,
    msg: { type: "model_text_delta", text: `chunk ${seq}` },
  };
}

/** `tickets` answers each connection's ticket request in turn (a string or an error). */
function harness(after = 0, tickets: (string | Error)[] = []) {
  const sockets: ScriptedSocket[] = [];
  const seen: number[] = [];
  const states: StreamState[] = [];
  let issued = 0;
  const stream = new EventStream({
    url: (from) => {
      const next = tickets[issued] ?? `t${issued + 1}`;
      issued += 1;
      return next instanceof Error
        ? Promise.reject(next)
        : Promise.resolve(`ws://127.0.0.1:8420/v1/sessions/s1/events?after=${from}&ticket=${next}`);
    },
    onEvent: (e) => seen.push(e.seq),
    onState: (s) => states.push(s),
    after,
    socket: (url) => {
      const socket = new ScriptedSocket(url);
      sockets.push(socket);
      return socket;
    },
  });
  const last = () => {
    const socket = sockets.at(-1);
    if (!socket) {
      throw new Error("no socket was opened");
    }
    return socket;
  };
  return { stream, sockets, seen, states, last };
}

describe("EventStream", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reconnects after a drop with a new ticket, asking for the events after the last one seen, each delivered once", async () => {
    const { stream, sockets, seen, last } = harness();
    stream.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(last().url).toBe("ws://127.0.0.1:8420/v1/sessions/s1/events?after=0&ticket=t1");
    last().open();
    last().send([1, 2, 3]);
    last().drop(1013, "too slow; reconnect with after=3");
    await vi.advanceTimersByTimeAsync(250);
    expect(sockets).toHaveLength(2);
    expect(last().url).toBe("ws://127.0.0.1:8420/v1/sessions/s1/events?after=3&ticket=t2");
    // The server replays from its durable log; an overlap must not be delivered twice.
    last().open();
    last().send([2, 3, 4, 5]);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(stream.after).toBe(5);
  });

  it("starts from the given sequence number", async () => {
    const { stream, last, seen } = harness(41);
    stream.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(last().url).toContain("after=41&");
    last().send([40, 41, 42]);
    expect(seen).toEqual([42]);
  });

  it("backs off exponentially up to the cap, and resets once events flow again", async () => {
    const { stream, states, last, sockets } = harness();
    stream.start();
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 7; i++) {
      last().drop();
      await vi.runOnlyPendingTimersAsync();
    }
    const delays = states.flatMap((s) => (s.kind === "reconnecting" ? [s.inMs] : []));
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 8000, 10000]);
    last().send([1]);
    last().drop();
    expect(states.at(-1)).toEqual({ kind: "reconnecting", attempt: 1, inMs: 250 });
    expect(sockets).toHaveLength(8);
  });

  it("retries when a ticket cannot be had for a passing reason", async () => {
    const unreachable = new ApiError("unreachable", "Could not reach the server", null);
    const { stream, sockets, states } = harness(0, [unreachable]);
    stream.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(sockets).toHaveLength(0);
    expect(states.at(-1)).toEqual({ kind: "reconnecting", attempt: 1, inMs: 250 });
    await vi.advanceTimersByTimeAsync(250);
    expect(sockets).toHaveLength(1);
  });

  it("stops for good when the server refuses the token or knows no such session", async () => {
    for (const refusal of [
      new ApiError("unauthorized", "send the API token", 401),
      new ApiError("session_not_found", "no session `s1`", 404),
    ]) {
      const { stream, states, sockets } = harness(0, [refusal]);
      stream.start();
      await vi.runAllTimersAsync();
      expect(sockets).toHaveLength(0);
      expect(states.at(-1)).toEqual({ kind: "refused", reason: refusal.message });
    }
  });

  it("close() ends the stream and no reconnect follows, even for a ticket still on its way", async () => {
    const { stream, sockets, states, last } = harness();
    stream.start();
    await vi.advanceTimersByTimeAsync(0);
    const socket = last();
    socket.open();
    stream.close();
    socket.drop();
    await vi.runAllTimersAsync();
    expect(socket.closedWith).toBe(1000);
    expect(sockets).toHaveLength(1);
    expect(states.at(-1)).toEqual({ kind: "closed" });

    const late = harness();
    late.stream.start();
    late.stream.close();
    await vi.runAllTimersAsync();
    expect(late.sockets).toHaveLength(0);
  });

  it("ignores frames that are not events", async () => {
    const { stream, seen, last } = harness();
    stream.start();
    await vi.advanceTimersByTimeAsync(0);
    last().onmessage?.({ data: "not json" });
    last().onmessage?.({ data: JSON.stringify({ hello: 1 }) });
    last().onmessage?.({ data: new ArrayBuffer(4) });
    last().send([1]);
    expect(seen).toEqual([1]);
  });
});

describe("helpers", () => {
  it("maps http(s) to ws(s)", () => {
    expect(webSocketUrl("http://127.0.0.1:8420/v1/x?after=1")).toBe(
      "ws://127.0.0.1:8420/v1/x?after=1",
    );
    expect(webSocketUrl("https://paddock.example/v1")).toBe("wss://paddock.example/v1");
  });
});
