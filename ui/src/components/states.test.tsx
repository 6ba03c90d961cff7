import { cleanup, render, screen } from "@solidjs/testing-library";
import { createResource, createRoot } from "solid-js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/errors";
import { CountBadge, EnforcementBadge } from "./Badge";
import { DirectModeWarning } from "./DirectModeWarning";
import { AsyncView, ErrorState } from "./states";

afterEach(cleanup);

describe("ErrorState", () => {
  it("shows the server's message and code in place, as an alert, with a retry", () => {
    const retry = vi.fn();
    render(() => (
      <ErrorState
        title="Sessions could not be loaded"
        error={new ApiError("session_store", "sessions.db is locked by another writer", 503)}
        onRetry={retry}
      />
    ));
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("Sessions could not be loaded");
    expect(alert.textContent).toContain("sessions.db is locked by another writer");
    expect(alert.textContent).toContain("Error code: session_store");
    screen.getByRole("button", { name: "Try again" }).click();
    expect(retry).toHaveBeenCalledOnce();
  });

  it("shows a plain error's message without a code", () => {
    render(() => <ErrorState error={new Error("boom")} />);
    expect(screen.getByRole("alert").textContent).toBe("This could not be loadedboom");
  });
});

describe("AsyncView", () => {
  function view<T>(fetcher: () => Promise<T>, isEmpty?: (value: T) => boolean) {
    const { container, unmount } = render(() => {
      const [resource] = createResource(fetcher);
      return (
        <AsyncView
          resource={resource}
          {...(isEmpty ? { isEmpty } : {})}
          empty={<p>nothing yet</p>}
          loadingLabel="Loading sessions…"
        >
          {(value) => <p>value: {String(value)}</p>}
        </AsyncView>
      );
    });
    return { container, unmount };
  }

  it("shows loading, then the content", async () => {
    let resolve: (value: string) => void = () => undefined;
    view(() => new Promise<string>((r) => (resolve = r)));
    expect(screen.getByRole("status").textContent).toBe("Loading sessions…");
    resolve("ready");
    expect(await screen.findByText("value: ready")).toBeTruthy();
    expect(screen.queryByRole("status")).toBeNull();
  });

  it("shows the empty state when the value is empty", async () => {
    view(() => Promise.resolve([] as number[]), (list) => list.length === 0);
    expect(await screen.findByText("nothing yet")).toBeTruthy();
  });

  it("shows an API error in place", async () => {
    view(() => Promise.reject(new ApiError("unreachable", "Could not reach the server", null)));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Could not reach the server");
  });

  it("keeps the content through a refresh, building it again only for a new value", async () => {
    const first = ["a"];
    let next: string[] = first;
    let release: () => void = () => undefined;
    const built: string[][] = [];
    let refetch: () => unknown = () => undefined;
    render(() => {
      const [resource, actions] = createResource(
        () => new Promise<string[]>((resolve) => (release = () => { resolve(next); })),
      );
      refetch = actions.refetch;
      return (
        <AsyncView resource={resource}>
          {(value) => {
            built.push(value);
            return <p>value: {value.join(",")}</p>;
          }}
        </AsyncView>
      );
    });
    release();
    await screen.findByText("value: a");
    // The same value again: shown throughout (no loading state), built once.
    void refetch();
    expect(screen.getByText("value: a")).toBeTruthy();
    release();
    await Promise.resolve();
    await Promise.resolve();
    expect(built).toEqual([first]);
    // A new value: built once more.
    next = ["b"];
    void refetch();
    release();
    await screen.findByText("value: b");
    expect(built).toEqual([first, next]);
  });
});

describe("badges", () => {
  it("names every wall with words, not colour alone", () => {
    const labels = (["openshell", "local", "none", "host"] as const).map((level) => {
      const { container, unmount } = render(() => <EnforcementBadge level={level} />);
      const text = container.textContent;
      unmount();
      return text;
    });
    expect(labels).toEqual(["OpenShell", "Local wall", "None", "Host"]);
  });

  it("hides a zero count and reads a count out with its meaning", () => {
    createRoot((dispose) => {
      const { container: zero } = render(() => <CountBadge count={0} label="pending approvals" />);
      expect(zero.textContent).toBe("");
      const { container: some } = render(() => <CountBadge count={3} label="pending approvals" />);
      expect(some.textContent).toBe("3, 3 pending approvals");
      const { container: many } = render(() => <CountBadge count={250} label="pending approvals" />);
      expect(many.querySelector("[aria-hidden]")?.textContent).toBe("99+");
      dispose();
    });
  });
});

describe("DirectModeWarning", () => {
  it("warns only in direct mode, and links to the setting that fixes it", () => {
    for (const provider of ["local", "openshell", null] as const) {
      const { container, unmount } = render(() => <DirectModeWarning provider={provider} />);
      expect(container.textContent).toBe("");
      unmount();
    }
    render(() => <DirectModeWarning provider="direct" />);
    const region = screen.getByRole("region", { name: "No sandbox" });
    expect(region.textContent).toContain("tool calls run on this computer with your rights");
    expect(region.querySelector("a")?.getAttribute("href")).toBe("/settings/sandbox");
  });
});
