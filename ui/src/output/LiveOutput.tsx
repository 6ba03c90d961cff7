import { createEffect, createMemo, createSignal, type JSX, on, onMount } from "solid-js";
import { frameBatcher, OutputBuffer, type OutputBufferOptions } from "./buffer";

/** A live output: chunks go into the buffer at once; views repaint at most once a frame. */
export interface LiveOutputSource {
  buffer: OutputBuffer;
  /** Bumped once per frame in which chunks arrived. */
  version: () => number;
  append: (chunk: string) => void;
}

export function createLiveOutput(
  options: OutputBufferOptions = {},
  requestFrame?: (run: () => void) => unknown,
): LiveOutputSource {
  const buffer = new OutputBuffer(options);
  const [version, setVersion] = createSignal(0);
  const repaint = frameBatcher(() => setVersion((v) => v + 1), requestFrame);
  return {
    buffer,
    version,
    append: (chunk) => {
      buffer.append(chunk);
      repaint();
    },
  };
}

const ROW_HEIGHT = 18;
const OVERSCAN = 20;

/**
 * A window onto a live output: only the rows in view (plus a margin) are in the DOM, as one text
 * node, so 10 MB of output costs what one screenful costs. It follows the end while the user is
 * at the bottom and stays put when they have scrolled up.
 */
export function LiveOutput(props: {
  source: LiveOutputSource;
  label: string;
  height?: number;
}): JSX.Element {
  let viewport: HTMLDivElement | undefined;
  const [scrollTop, setScrollTop] = createSignal(0);
  let following = true;
  const height = () => props.height ?? 320;

  const visible = createMemo(() => {
    props.source.version();
    const buffer = props.source.buffer;
    const first = Math.max(0, Math.floor(scrollTop() / ROW_HEIGHT) - OVERSCAN);
    const rows = Math.ceil(height() / ROW_HEIGHT) + 2 * OVERSCAN;
    return { first, text: buffer.slice(first, first + rows).join("\n"), total: buffer.lineCount };
  });

  const followEnd = () => {
    if (following && viewport) {
      viewport.scrollTop = viewport.scrollHeight;
      setScrollTop(viewport.scrollTop);
    }
  };
  onMount(followEnd);
  // User effects run after the DOM took the new rows, so the new height is there to scroll to.
  createEffect(on(() => props.source.version(), followEnd, { defer: true }));

  return (
    <div
      ref={(element) => {
        viewport = element;
      }}
      class="live-output"
      role="log"
      aria-label={props.label}
      aria-live="off"
      tabindex="0"
      style={{ height: `${height()}px` }}
      onScroll={(event) => {
        const element = event.currentTarget;
        following = element.scrollTop + element.clientHeight >= element.scrollHeight - ROW_HEIGHT;
        setScrollTop(element.scrollTop);
      }}
    >
      <div class="live-output-spacer" style={{ height: `${visible().total * ROW_HEIGHT}px` }}>
        <pre
          class="live-output-rows"
          style={{ transform: `translateY(${visible().first * ROW_HEIGHT}px)` }}
        >
          {visible().text}
        </pre>
      </div>
    </div>
  );
}
