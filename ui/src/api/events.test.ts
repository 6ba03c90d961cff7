import type { Event } from "@protocol/Event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  authProtocols,
  EventStream,
  type SocketLike,
  type StreamState,
  webSocketUrl,
} from "./events";

/** A socket the test drives by hand: it records what was asked of it and fires its handlers. */
class ScriptedSocket implements SocketLike {
  onopen: SocketLike["onopen"] = null;
  onmessage: SocketLike["onmessage"] = null;
  onclose: SocketLike["onclose"] = null;
  onerror: SocketLike["onerror"] = null;
  closedWith: number | null = null;

  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {}

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

function harness(after = 0) {
  const sockets: ScriptedSocket[] = [];
  const seen: number[] = [];
  const states: StreamState[] = [];
  const stream = new EventStream({
    url: (from) => `ws://127.0.0.1:7420/api/sessions/s1/events?after=${from}`,
    protocols: () => authProtocols("tok"),
    onEvent: (e) => seen.push(e.seq),
    onState: (s) => states.push(s),
    after,
    socket: (url, protocols) => {
      const socket = new ScriptedSocket(url, protocols);
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

  it("reconnects after a drop asking for the events after the last one seen, each delivered once", () => {
    const { stream, sockets, seen, last } = harness();
    stream.start();
    last().open();
    last().send([1, 2, 3]);
    last().drop();
    vi.advanceTimersByTime(250);
    expect(sockets).toHaveLength(2);
    expect(last().url).toBe("ws://127.0.0.1:7420/api/sessions/s1/events?after=3");
    // The server replays from its durable log; an overlap must not be delivered twice.
    last().open();
    last().send([2, 3, 4, 5]);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(stream.after).toBe(5);
  });

  it("starts from the given sequence number", () => {
    const { stream, last, seen } = harness(41);
    stream.start();
    expect(last().url).toBe("ws://127.0.0.1:7420/api/sessions/s1/events?after=41");
    last().send([40, 41, 42]);
    expect(seen).toEqual([42]);
  });

  it("backs off exponentially up to the cap, and resets once events flow again", () => {
    const { stream, states, last, sockets } = harness();
    stream.start();
    for (let i = 0; i < 7; i++) {
      last().drop();
      vi.runOnlyPendingTimers();
    }
    const delays = states.flatMap((s) => (s.kind === "reconnecting" ? [s.inMs] : []));
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 8000, 10000]);
    last().send([1]);
    last().drop();
    expect(states.at(-1)).toEqual({ kind: "reconnecting", attempt: 1, inMs: 250 });
    expect(sockets).toHaveLength(8);
  });

  it("stops for good when the server refuses the token", () => {
    const { stream, states, sockets, last } = harness();
    stream.start();
    last().drop(4401, "token refused");
    vi.runAllTimers();
    expect(sockets).toHaveLength(1);
    expect(states.at(-1)).toEqual({ kind: "refused", reason: "token refused" });
  });

  it("close() ends the stream and no reconnect follows", () => {
    const { stream, sockets, states, last } = harness();
    stream.start();
    const socket = last();
    socket.open();
    stream.close();
    socket.drop();
    vi.runAllTimers();
    expect(socket.closedWith).toBe(1000);
    expect(sockets).toHaveLength(1);
    expect(states.at(-1)).toEqual({ kind: "closed" });
  });

  it("ignores frames that are not events", () => {
    const { stream, seen, last } = harness();
    stream.start();
    last().onmessage?.({ data: "not json" });
    last().onmessage?.({ data: JSON.stringify({ hello: 1 }) });
    last().onmessage?.({ data: new ArrayBuffer(4) });
    last().send([1]);
    expect(seen).toEqual([1]);
  });

  it("offers the token as a subprotocol, never in the URL", () => {
    const { stream, last } = harness();
    stream.start();
    expect(last().url).not.toContain("tok");
    expect(last().protocols).toEqual(["paddock.v1", "paddock.bearer.dG9r"]);
  });
});

describe("helpers", () => {
  it("maps http(s) to ws(s)", () => {
    expect(webSocketUrl("http://127.0.0.1:7420/api/x?after=1")).toBe(
      "ws://127.0.0.1:7420/api/x?after=1",
    );
    expect(webSocketUrl("https://paddock.example/api")).toBe("wss://paddock.example/api");
  });

  it("encodes any token as base64url without padding", () => {
    expect(authProtocols(null)).toEqual(["paddock.v1"]);
    expect(authProtocols("a+b/c?")).toEqual(["paddock.v1", "paddock.bearer.YStiL2M_"]);
  });
});
