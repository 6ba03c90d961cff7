import { describe, expect, it } from "vitest";
import { frameBatcher, OutputBuffer } from "./buffer";

describe("OutputBuffer", () => {
  it("joins chunks split anywhere into the same lines", () => {
    const text = "first line\nsecond\r\n\nfourth, unfinished";
    const whole = new OutputBuffer();
    whole.append(text);
    for (let cut = 0; cut <= text.length; cut++) {
      const split = new OutputBuffer();
      split.append(text.slice(0, cut));
      split.append(text.slice(cut));
      expect(split.slice(0, 10)).toEqual(whole.slice(0, 10));
    }
    expect(whole.slice(0, 10)).toEqual(["first line", "second", "", "fourth, unfinished"]);
    expect(whole.lineCount).toBe(4);
    expect(whole.size).toBe(text.length);
  });

  it("cuts very long lines into rows", () => {
    const buffer = new OutputBuffer({ maxLineLength: 4 });
    buffer.append("abcdefghij\nxy");
    expect(buffer.slice(0, 10)).toEqual(["abcd", "efgh", "ij", "xy"]);
  });

  it("keeps the newest lines and counts the dropped ones", () => {
    const buffer = new OutputBuffer({ maxLines: 3 });
    for (let i = 1; i <= 10; i++) {
      buffer.append(`line ${i}\n`);
    }
    expect(buffer.lineCount).toBe(3);
    expect(buffer.dropped).toBe(7);
    expect(buffer.slice(0, 3)).toEqual(["line 8", "line 9", "line 10"]);
    expect(buffer.line(5)).toBe("");
  });

  it("takes 10 MB in 4 KiB chunks with memory of what it keeps", () => {
    const buffer = new OutputBuffer({ maxLines: 1000 });
    const chunk = `${"x".repeat(79)}\n`.repeat(51).slice(0, 4096);
    const chunks = Math.ceil((10 * 1024 * 1024) / chunk.length);
    for (let i = 0; i < chunks; i++) {
      buffer.append(chunk);
    }
    expect(buffer.size).toBe(chunks * chunk.length);
    expect(buffer.lineCount).toBe(1000);
    expect(buffer.dropped).toBeGreaterThan(120_000);
  });
});

describe("frameBatcher", () => {
  it("runs the callback once per frame however often it is asked", () => {
    const frames: (() => void)[] = [];
    let runs = 0;
    const schedule = frameBatcher(
      () => runs++,
      (run) => frames.push(run),
    );
    for (let i = 0; i < 1000; i++) schedule();
    expect(frames).toHaveLength(1);
    frames.shift()?.();
    expect(runs).toBe(1);
    schedule();
    schedule();
    expect(frames).toHaveLength(1);
  });
});
