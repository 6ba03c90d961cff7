import { cleanup, render, screen } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { createLiveOutput, LiveOutput } from "./LiveOutput";

afterEach(cleanup);

describe("LiveOutput", () => {
  it("puts only a window of rows in the DOM, however much output arrived", () => {
    const frames: (() => void)[] = [];
    let source!: ReturnType<typeof createLiveOutput>;
    render(() => {
      source = createLiveOutput({}, (run) => frames.push(run));
      return <LiveOutput source={source} label="Output of cargo test" height={180} />;
    });
    for (let i = 0; i < 100_000; i++) {
      source.append(`line ${i}\n`);
    }
    // 100 000 appends asked for one repaint.
    expect(frames).toHaveLength(1);
    frames.shift()?.();
    const log = screen.getByRole("log", { name: "Output of cargo test" });
    const rows = log.querySelector("pre")?.textContent.split("\n") ?? [];
    // In view: 180 px / 18 px = 10 rows, plus 20 rows of margin on each side.
    expect(rows.length).toBeLessThanOrEqual(50);
    expect(rows.length).toBeGreaterThan(0);
    const spacer = log.firstElementChild as HTMLElement;
    expect(spacer.style.height).toBe(`${100_000 * 18}px`);
  });
});
