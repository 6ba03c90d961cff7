import type { Event } from "@server/Event";
import { ApiError } from "./errors";

/** Where a live event stream stands, for the UI to show. */
export type StreamState =
  | { kind: "connecting" }
  | { kind: "open" }
  | { kind: "reconnecting"; attempt: number; inMs: number }
  | { kind: "refused"; reason: string }
  | { kind: "closed" };

/** The subset of the browser's `WebSocket` the stream uses (tests pass their own). */
export interface SocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}

export type SocketFactory = (url: string) => SocketLike;

export interface EventStreamOptions {
  /**
   * The WebSocket URL that replays every event after `after` and then follows live. Asked
   * afresh for every connection: it carries a single-use ticket (browsers cannot set an
   * `Authorization` header on a WebSocket, and the token never goes into a URL).
   */
  url: (after: number) => Promise<string>;
  onEvent: (event: Event) => void;
  onState?: (state: StreamState) => void;
  /** Resume after this sequence number (0: from the start). */
  after?: number;
  /** First reconnect delay; doubles on every failed attempt up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  socket?: SocketFactory;
}

/**
 * Errors getting a URL after which reconnecting cannot help: the token is refused, or the
 * session does not exist.
 */
function isFinal(error: unknown): error is ApiError {
  return (
    error instanceof ApiError &&
    (error.isUnauthorized || error.code === "session_not_found" || error.code === "forbidden_origin")
  );
}

/**
 * One session's live events over a WebSocket, surviving disconnects: every reconnect asks for a
 * new ticket and the events after the last sequence number seen, and an event is delivered once
 * even if the server replays it. The server closes with 1001 (shutting down) or 1013 (this
 * client fell behind); both are reconnected. The stream stops for good only when `close()` is
 * called or the server refuses it (the token or the session).
 */
export class EventStream {
  private readonly options: EventStreamOptions;
  private readonly factory: SocketFactory;
  private socket: SocketLike | null = null;
  private lastSeq: number;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  /** Bumped by every connect and close, so a late ticket cannot open a stale socket. */
  private generation = 0;

  constructor(options: EventStreamOptions) {
    this.options = options;
    this.lastSeq = options.after ?? 0;
    this.factory = options.socket ?? ((url) => new WebSocket(url) as unknown as SocketLike);
  }

  /** The sequence number of the last event delivered. */
  get after(): number {
    return this.lastSeq;
  }

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  close(): void {
    this.stopped = true;
    this.generation += 1;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      detach(socket);
      socket.close(1000, "closed by the client");
    }
    this.options.onState?.({ kind: "closed" });
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    this.options.onState?.({ kind: "connecting" });
    let url: string;
    try {
      url = await this.options.url(this.lastSeq);
    } catch (cause) {
      if (generation !== this.generation || this.stopped) {
        return;
      }
      if (isFinal(cause)) {
        this.refuse(cause.message);
      } else {
        this.scheduleReconnect();
      }
      return;
    }
    if (generation !== this.generation || this.stopped) {
      return;
    }
    let socket: SocketLike;
    try {
      socket = this.factory(url);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      this.refuse(`The event stream could not be opened: ${reason}`);
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.options.onState?.({ kind: "open" });
    };
    socket.onmessage = (message) => {
      this.receive(message.data);
    };
    socket.onerror = () => {
      // Always followed by `onclose`, which decides what happens next.
    };
    socket.onclose = () => {
      if (this.socket !== socket) {
        return;
      }
      this.socket = null;
      if (!this.stopped) {
        this.scheduleReconnect();
      }
    };
  }

  private receive(data: unknown): void {
    if (typeof data !== "string") {
      return;
    }
    let event: Event;
    try {
      event = JSON.parse(data) as Event;
    } catch {
      return;
    }
    if (typeof event.seq !== "number") {
      return;
    }
    // Live-only events (text deltas, output chunks) are numbered too and never replayed; an
    // event at or below the last one seen is a replayed duplicate.
    if (event.seq <= this.lastSeq) {
      return;
    }
    this.lastSeq = event.seq;
    this.attempt = 0;
    this.options.onEvent(event);
  }

  private scheduleReconnect(): void {
    this.attempt += 1;
    const initial = this.options.initialDelayMs ?? 250;
    const max = this.options.maxDelayMs ?? 10_000;
    const inMs = Math.min(max, initial * 2 ** (this.attempt - 1));
    this.options.onState?.({ kind: "reconnecting", attempt: this.attempt, inMs });
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) {
        void this.connect();
      }
    }, inMs);
  }

  private refuse(reason: string): void {
    this.stopped = true;
    this.options.onState?.({ kind: "refused", reason });
  }
}

function detach(socket: SocketLike): void {
  socket.onopen = null;
  socket.onmessage = null;
  socket.onclose = null;
  socket.onerror = null;
}

/** `http(s)://` → `ws(s)://` for the same server. */
export function webSocketUrl(httpUrl: string): string {
  const url = new URL(httpUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}
