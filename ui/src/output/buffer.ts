/**
 * A tool call's live output as lines, built incrementally: each appended chunk costs time in
 * proportion to its own length, never to what came before, so 10 MB arriving in small chunks
 * stays cheap. Very long lines are cut into rows of `maxLineLength` characters (a view can only
 * lay out so much text in one row), and past `maxLines` the oldest lines are dropped and counted.
 */
export interface OutputBufferOptions {
  maxLines?: number;
  maxLineLength?: number;
}

export class OutputBuffer {
  private readonly lines: string[] = [];
  /** Index of the first kept line in `lines` (dropped lines are trimmed in batches). */
  private start = 0;
  private partial = "";
  private droppedLines = 0;
  private characters = 0;
  private readonly maxLines: number;
  private readonly maxLineLength: number;

  constructor(options: OutputBufferOptions = {}) {
    this.maxLines = options.maxLines ?? 200_000;
    this.maxLineLength = options.maxLineLength ?? 4_096;
  }

  /** Characters received so far, including dropped ones. */
  get size(): number {
    return this.characters;
  }

  /** Lines no longer kept (the oldest, past `maxLines`). */
  get dropped(): number {
    return this.droppedLines;
  }

  /** Kept lines, counting an unfinished last line. */
  get lineCount(): number {
    return this.lines.length - this.start + (this.partial ? 1 : 0);
  }

  /** The kept line at `index` (0 is the oldest kept line). */
  line(index: number): string {
    const complete = this.lines.length - this.start;
    if (index < complete) {
      return this.lines[this.start + index] ?? "";
    }
    return index === complete ? this.partial : "";
  }

  /** Lines `[from, to)`, clamped to what is kept. */
  slice(from: number, to: number): string[] {
    const end = Math.min(to, this.lineCount);
    const out: string[] = [];
    for (let index = Math.max(0, from); index < end; index++) {
      out.push(this.line(index));
    }
    return out;
  }

  append(chunk: string): void {
    this.characters += chunk.length;
    let from = 0;
    for (;;) {
      const newline = chunk.indexOf("\n", from);
      const end = newline === -1 ? chunk.length : newline;
      this.addToPartial(chunk.slice(from, end));
      if (newline === -1) {
        break;
      }
      this.finishLine();
      from = newline + 1;
    }
    this.trim();
  }

  private addToPartial(text: string): void {
    let rest = text;
    while (this.partial.length + rest.length > this.maxLineLength) {
      const room = this.maxLineLength - this.partial.length;
      this.partial += rest.slice(0, room);
      rest = rest.slice(room);
      this.finishLine();
    }
    this.partial += rest;
  }

  private finishLine(): void {
    this.lines.push(this.partial.endsWith("\r") ? this.partial.slice(0, -1) : this.partial);
    this.partial = "";
  }

  private trim(): void {
    const excess = this.lineCount - this.maxLines;
    if (excess <= 0) {
      return;
    }
    this.start += excess;
    this.droppedLines += excess;
    // Compact once the dead prefix is as long as what is kept: amortised O(1) per line.
    if (this.start >= this.lines.length - this.start) {
      this.lines.splice(0, this.start);
      this.start = 0;
    }
  }
}

/**
 * Coalesces many calls into one per animation frame: however fast chunks arrive, the view
 * repaints at most once a frame.
 */
export function frameBatcher(
  callback: () => void,
  requestFrame: (run: () => void) => unknown = (run) => requestAnimationFrame(run),
): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) {
      return;
    }
    scheduled = true;
    requestFrame(() => {
      scheduled = false;
      callback();
    });
  };
}
