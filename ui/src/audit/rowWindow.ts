import { type Accessor, createMemo, createSignal, onCleanup, onMount } from "solid-js";
import { frameBatcher } from "../output/buffer";

/**
 * The rows of a long page that are in the DOM: those in view plus a margin, at least
 * [`MIN_ROWS`]. The rest are stood in for by spacers of the same height. A 200-row audit page
 * laid out whole cost about 80 ms of layout alone (a table sizes its columns from every cell);
 * a window of ~60 rows costs a third of it, whatever the page size.
 */

/** Every audit row's height in pixels (the table pins it: `.audit-row` in pages.css). */
export const ROW_HEIGHT = 33;
/** Rows kept above and below the ones in view, so scrolling and Tab find them already there. */
export const OVERSCAN = 20;
/** Pages this short (the smallest page size and then some) are rendered whole. */
export const MIN_ROWS = 60;

export interface RowRange {
  /** The first row in the DOM. */
  first: number;
  /** One past the last row in the DOM. */
  last: number;
}

/**
 * Which of `count` rows to render, when the viewport spans `viewTop`–`viewBottom` pixels
 * measured from the top of the first row.
 */
export function rowRange(count: number, viewTop: number, viewBottom: number, rowHeight = ROW_HEIGHT): RowRange {
  const firstVisible = Math.floor(Math.max(0, viewTop) / rowHeight);
  const lastVisible = Math.ceil(Math.max(0, viewBottom) / rowHeight);
  let first = Math.min(count, Math.max(0, firstVisible - OVERSCAN));
  const last = Math.min(count, Math.max(lastVisible + OVERSCAN, first + MIN_ROWS));
  first = Math.max(0, Math.min(first, last - MIN_ROWS));
  return { first, last };
}

/**
 * The window of rows to render in `body` (a table body of `count()` rows), following the
 * scrolling pane it is in (the shell's `.main`, else the page) at most once a frame.
 */
export function createRowWindow(count: () => number, body: () => HTMLElement | undefined): Accessor<RowRange> {
  const [view, setView] = createSignal({ top: 0, bottom: typeof window === "undefined" ? 0 : window.innerHeight });
  const measure = () => {
    const element = body();
    if (!element) {
      return;
    }
    const pane = element.closest(".main");
    const top = element.getBoundingClientRect().top;
    const port = pane ? pane.getBoundingClientRect() : { top: 0, bottom: window.innerHeight };
    setView({ top: port.top - top, bottom: port.bottom - top });
  };
  const schedule = frameBatcher(measure);
  onMount(() => {
    measure();
    const pane = body()?.closest(".main") ?? window;
    pane.addEventListener("scroll", schedule, { passive: true });
    window.addEventListener("resize", schedule);
    onCleanup(() => {
      pane.removeEventListener("scroll", schedule);
      window.removeEventListener("resize", schedule);
    });
  });
  return createMemo(() => rowRange(count(), view().top, view().bottom), undefined, {
    equals: (a, b) => a.first === b.first && a.last === b.last,
  });
}
