// The live-output benchmark's page: the session view's LiveOutput (the same component, buffer
// and styles, built for production) fed a tool call's output as `tool_call_output` events, one
// event per task, as a WebSocket delivers a burst of messages.
import "../../src/styles/tokens.css";
import "../../src/styles/base.css";
import "../../src/styles/components.css";
import { render } from "solid-js/web";
import { createLiveOutput, LiveOutput } from "../../src/output/LiveOutput";

/** Lines kept per call, as the session view keeps them (`OUTPUT_LINES` in SessionView.tsx). */
const OUTPUT_LINES = 100_000;

const source = createLiveOutput({ maxLines: OUTPUT_LINES });

declare global {
  interface Window {
    /** Builds the events of `lines` numbered lines of `lineBytes` bytes, in chunks of `chunkBytes`. */
    benchPrepare: (lines: number, lineBytes: number, chunkBytes: number) => { bytes: number; events: number; lastLine: string };
    /** Delivers the prepared events, one per task; resolves with the milliseconds it took. */
    benchFeed: () => Promise<number>;
    benchBuffer: () => { size: number; lineCount: number; dropped: number };
  }
}

let events: string[] = [];

window.benchPrepare = (lines, lineBytes, chunkBytes) => {
  const filler = "the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz ".repeat(4);
  const parts: string[] = [];
  let lastLine = "";
  for (let i = 1; i <= lines; i++) {
    const head = `line ${String(i).padStart(7, "0")}: `;
    lastLine = head + filler.slice(0, lineBytes - head.length - 1);
    parts.push(lastLine);
  }
  const text = `${parts.join("\n")}\n`;
  events = [];
  for (let at = 0, seq = 1; at < text.length; at += chunkBytes, seq++) {
    events.push(
      JSON.stringify({
        seq,
        session_id: "bench",
        turn_id: "turn-1",
        time_ms: Date.now(),
        msg: { type: "tool_call_output", call_id: "call-1", stream: "stdout", chunk: text.slice(at, at + chunkBytes) },
      }),
    );
  }
  return { bytes: text.length, events: events.length, lastLine };
};

window.benchFeed = () =>
  new Promise((resolve) => {
    const channel = new MessageChannel();
    let next = 0;
    const started = performance.now();
    channel.port1.onmessage = () => {
      const event = JSON.parse(events[next] ?? "{}") as { msg: { chunk: string } };
      source.append(event.msg.chunk);
      next++;
      if (next < events.length) {
        channel.port2.postMessage(null);
      } else {
        resolve(performance.now() - started);
      }
    };
    channel.port2.postMessage(null);
  });

window.benchBuffer = () => ({
  size: source.buffer.size,
  lineCount: source.buffer.lineCount,
  dropped: source.buffer.dropped,
});

const root = document.getElementById("root");
if (!root) {
  throw new Error("the benchmark page has no #root element");
}
render(
  () => (
    <main style={{ padding: "16px", "max-width": "960px" }}>
      <LiveOutput source={source} label="Output of the benchmark's command" height={220} />
    </main>
  ),
  root,
);
