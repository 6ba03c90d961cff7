import { cleanup, render, screen } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { ProtectedCard } from "./ProtectedCard";
import type { ProtectedChange } from "./timeline";

afterEach(cleanup);

const CHANGE: ProtectedChange = {
  kind: "protected",
  key: "p-1",
  callId: "c1",
  path: "/work/project/.vscode/tasks.json",
  reason: "editors run the tasks it defines",
  action: "quarantined",
  quarantinedTo: "/state/quarantine/1/tasks.json",
  detail: "created by the call",
  timeMs: 1,
};

describe("ProtectedCard", () => {
  it("names the file, why it is protected, and where the original went", () => {
    render(() => <ProtectedCard change={CHANGE} />);
    const note = screen.getByRole("note", { name: "Protected file changed" });
    expect(note.textContent).toContain("/work/project/.vscode/tasks.json");
    expect(note.textContent).toContain("Why it is protected: editors run the tasks it defines.");
    expect(note.textContent).toContain("Moved aside");
    expect(note.textContent).toContain("The original is kept at /state/quarantine/1/tasks.json.");
  });

  it("warns loudest when the change could not be undone", () => {
    render(() => <ProtectedCard change={{ ...CHANGE, action: "reported", quarantinedTo: null }} />);
    const note = screen.getByRole("note", { name: "Protected file changed" });
    expect(note.textContent).toContain("Left in place");
    expect(note.textContent).toContain("look at the file before you run git");
    expect(note.textContent).not.toContain("The original is kept");
  });
});
