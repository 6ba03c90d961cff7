import type { Event } from "@protocol/Event";

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

export type SocketFactory = (url: string, protocols: string[]) => SocketLike;

export interface EventStreamOptions {
  /** The WebSocket URL that replays every event after `after` and then follows live. */
  url: (after: number) => string;
  /** Subprotocols offered on every connection (they carry the token; see `authProtocols`). */
  protocols: () => string[];
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
 * Close codes after which reconnecting cannot help: the server refused the token (4401, our
 * application code) or the request (1008 policy violation).
 */
const REFUSED_CODES = new Set([1008, 4401, 4403]);

/**
 * One session's live events over a WebSocket, surviving disconnects: every reconnect asks for the
 * events after the last sequence number seen, and an event is delivered once even if the server
 * replays it. The stream stops for good only when `close()` is called or the server refuses it.
 */
export class EventStream {
  private readonly options: EventStreamOptions;
  private readonly factory: SocketFactory;
  private socket: SocketLike | null = null;
  private lastSeq: number;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(options: EventStreamOptions) {
    this.options = options;
    this.lastSeq = options.after ?? 0;
    this.factory =
      options.socket ??
      ((url, protocols) => new WebSocket(url, protocols) as unknown as SocketLike);
  }

  /** The sequence number of the last event delivered. */
  get after(): number {
    return this.lastSeq;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  close(): void {
    this.stopped = true;
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

  private connect(): void {
    this.options.onState?.({ kind: "connecting" });
    let socket: SocketLike;
    try {
      socket = this.factory(this.options.url(this.lastSeq), this.options.protocols());
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
    socket.onclose = (event) => {
      if (this.socket !== socket) {
        return;
      }
      this.socket = null;
      if (this.stopped) {
        return;
      }
      if (REFUSED_CODES.has(event.code)) {
        this.refuse(event.reason || `The server refused the event stream (code ${event.code}).`);
        return;
      }
      this.scheduleReconnect();
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
    if (typeof event.seq !== "number" || event.seq <= this.lastSeq) {
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
        this.connect();
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

/**
 * The subprotocols that authenticate a WebSocket without putting the token in its URL (browsers
 * cannot set an `Authorization` header on one): `paddock.v1` names the protocol, and
 * `paddock.bearer.<base64url(token)>` carries the token in the `Sec-WebSocket-Protocol` header.
 */
export function authProtocols(token: string | null): string[] {
  const protocols = ["paddock.v1"];
  if (token) {
    protocols.push(`paddock.bearer.${base64Url(token)}`);
  }
  return protocols;
}

function base64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
