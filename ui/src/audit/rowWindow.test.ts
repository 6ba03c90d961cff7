import { describe, expect, it } from "vitest";
import { MIN_ROWS, OVERSCAN, ROW_HEIGHT, rowRange } from "./rowWindow";

describe("rowRange", () => {
  it("renders a short page whole", () => {
    expect(rowRange(50, 0, 800)).toEqual({ first: 0, last: 50 });
    expect(rowRange(50, 40 * ROW_HEIGHT, 60 * ROW_HEIGHT)).toEqual({ first: 0, last: 50 });
    expect(rowRange(0, 0, 800)).toEqual({ first: 0, last: 0 });
  });

  it("renders the rows in view of a long page, with the margin on both sides", () => {
    // Rows 100–120 in view.
    const range = rowRange(200, 100 * ROW_HEIGHT, 120 * ROW_HEIGHT);
    expect(range).toEqual({ first: 100 - OVERSCAN, last: 120 + OVERSCAN });
    expect(range.last - range.first).toBeGreaterThanOrEqual(MIN_ROWS);
  });

  it("keeps at least the minimum near either end", () => {
    // The table starts below the viewport's top (a negative top is above the first row).
    expect(rowRange(200, -400, 400)).toEqual({ first: 0, last: MIN_ROWS });
    expect(rowRange(200, 195 * ROW_HEIGHT, 205 * ROW_HEIGHT)).toEqual({ first: 200 - MIN_ROWS, last: 200 });
  });

  it("renders nothing of a page scrolled far past", () => {
    // The table is above the viewport: the last rows stay, so the window never empties.
    expect(rowRange(200, 10_000 * ROW_HEIGHT, 10_020 * ROW_HEIGHT)).toEqual({ first: 200 - MIN_ROWS, last: 200 });
  });
});
