import type { MachineSandboxStatus } from "@server/MachineSandboxStatus";
import { cleanup, fireEvent, screen, waitFor } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, errorAnswer, renderInApp, scriptedApp } from "../testing/app";
import { SandboxCard } from "./SandboxCard";
import type { SandboxBuild } from "./timeline";

afterEach(cleanup);

function build(change: Partial<SandboxBuild>): SandboxBuild {
  return {
    kind: "sandbox",
    key: "sb-1",
    steps: [],
    state: "building",
    enforcement: null,
    attestation: null,
    rebuiltBecause: null,
    refusal: null,
    ...change,
  };
}

function status(checks: MachineSandboxStatus["checks"]): MachineSandboxStatus {
  return { provider: "local", enforcement: "local", checks, protected_paths: [] };
}

function show(value: SandboxBuild, machine: Answer = () => status([])) {
  const app = scriptedApp({ "GET /v1/machine/sandbox": machine });
  renderInApp(app.state, () => <SandboxCard build={value} provider="local" />);
  return app;
}

const REFUSED = build({
  state: "refused",
  refusal: { reason: "The local wall cannot start: Landlock is not enabled", diagnose: "paddock machine sandbox status" },
});

describe("SandboxCard", () => {
  it("building: progress, each step as it comes", () => {
    show(build({ steps: ["mounting the folders", "starting the proxy"] }));
    expect(screen.getByRole("status").textContent).toContain("Building the sandbox…");
    expect(screen.getByText("starting the proxy")).toBeTruthy();
  });

  it("ready: the wall and how many checks from inside passed", () => {
    show(
      build({
        state: "ready",
        enforcement: "local",
        attestation: {
          enforcement: "local",
          config_hash: "sha256:ab",
          time_ms: 1,
          canaries: [
            { name: "home_absent", passed: true, detail: "" },
            { name: "outside_read_refused", passed: false, detail: "read /etc/shadow" },
          ],
        },
      }),
    );
    expect(screen.getByText("Sandbox ready")).toBeTruthy();
    expect(screen.getByText("Local wall")).toBeTruthy();
    expect(screen.getByText("1 of 2 checks from inside passed")).toBeTruthy();
  });

  it("rebuilt: why, and that shell state was lost", () => {
    show(build({ state: "ready", enforcement: "local", rebuiltBecause: "A folder was granted." }));
    expect(screen.getByText("Sandbox rebuilt")).toBeTruthy();
    expect(screen.getByText(/A folder was granted\. Its shell state/)).toBeTruthy();
    cleanup();
    // The host's reasons come without a full stop: one is added before the next sentence.
    show(build({ state: "ready", enforcement: "local", rebuiltBecause: "example.com:80 was allowed for this session" }));
    expect(screen.getByText(/example\.com:80 was allowed for this session\. Its shell state/)).toBeTruthy();
  });

  it("refused: the reason, and the fix of each failing check of this machine", async () => {
    const app = show(REFUSED, () =>
      status([
        { name: "landlock", ok: false, detail: "Landlock is not in the kernel's LSM list", fix: "add lsm=landlock to the kernel command line" },
        { name: "bubblewrap", ok: true, detail: "bwrap 0.11", fix: null },
      ]),
    );
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("The local wall cannot start: Landlock is not enabled");
    await screen.findByText("How to fix it");
    expect(alert.textContent).toContain("Landlock is not in the kernel's LSM list");
    expect(alert.textContent).toContain("Fix: add lsm=landlock to the kernel command line");
    expect(alert.textContent).not.toContain("bwrap 0.11");
    expect(alert.textContent).toContain("paddock machine sandbox status");
    expect(app.seen.find((r) => r.path === "/v1/machine/sandbox")?.query.get("provider")).toBe("local");
  });

  it("refused, but every check passes now: says to try again", async () => {
    show(REFUSED, () => status([{ name: "landlock", ok: true, detail: "ok", fix: null }]));
    await screen.findByText(/Every check of this machine passes now/);
  });

  it("refused, and the checks cannot be read: says so, and checks again on request", async () => {
    let reads = 0;
    show(REFUSED, () => {
      reads += 1;
      return reads === 1 ? errorAnswer(503, "unavailable", "the host is busy") : status([]);
    });
    await screen.findByText(/The machine's checks could not be read \(the host is busy\)/);
    fireEvent.click(screen.getByRole("button", { name: "Check again" }));
    await waitFor(() => {
      expect(screen.getByText(/Every check of this machine passes now/)).toBeTruthy();
    });
  });
});
