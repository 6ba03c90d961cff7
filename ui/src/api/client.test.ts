import { describe, expect, it, vi } from "vitest";
import { ApiClient } from "./client";
import { ApiError } from "./errors";

type FetchCall = { url: string; init: RequestInit };

function clientAnswering(answer: (call: FetchCall) => Response | Promise<Response>) {
  const calls: FetchCall[] = [];
  const onUnauthorized = vi.fn();
  let token: string | null = "secret-token";
  const client = new ApiClient({
    baseUrl: "http://127.0.0.1:7420/",
    token: () => token,
    onUnauthorized,
    fetch: (input, init) => {
      const url = input instanceof Request ? input.url : input.toString();
      const call = { url, init: init ?? {} };
      calls.push(call);
      return Promise.resolve(answer(call));
    },
  });
  return {
    client,
    calls,
    onUnauthorized,
    setToken: (value: string | null) => {
      token = value;
    },
  };
}

function header(call: FetchCall | undefined, name: string): string | null {
  return new Headers(call?.init.headers).get(name);
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) {
      return error;
    }
    throw error;
  }
  throw new Error("the request succeeded");
}

describe("ApiClient", () => {
  it("sends the bearer token, JSON body and query, and parses the JSON answer", async () => {
    const { client, calls } = clientAnswering(() => Response.json({ id: "s1" }, { status: 201 }));
    const answer = await client.post<{ id: string }>("/api/sessions", {
      body: { prompt: "hi" },
      query: { after: 5, missing: undefined },
    });
    expect(answer).toEqual({ id: "s1" });
    expect(calls[0]?.url).toBe("http://127.0.0.1:7420/api/sessions?after=5");
    expect(calls[0]?.init.method).toBe("POST");
    expect(calls[0]?.init.body).toBe('{"prompt":"hi"}');
    expect(header(calls[0], "Authorization")).toBe("Bearer secret-token");
    expect(header(calls[0], "Content-Type")).toBe("application/json");
    expect(calls[0]?.init.credentials).toBe("omit");
  });

  it("reads the token on every request and sends none when there is none", async () => {
    const { client, calls, setToken } = clientAnswering(() => new Response(null, { status: 204 }));
    setToken(null);
    await expect(client.delete("/api/x")).resolves.toBeUndefined();
    setToken("second");
    await client.get("/api/x");
    expect(header(calls[0], "Authorization")).toBeNull();
    expect(header(calls[1], "Authorization")).toBe("Bearer second");
  });

  it("turns a JSON error body into an ApiError with its code and message", async () => {
    const { client } = clientAnswering(() =>
      Response.json(
        { code: "invalid_setting", message: "sandbox.network_profile: unknown profile `wide`" },
        { status: 422 },
      ),
    );
    const error = await rejection(client.put("/api/settings", { body: {} }));
    expect(error.code).toBe("invalid_setting");
    expect(error.message).toBe("sandbox.network_profile: unknown profile `wide`");
    expect(error.status).toBe(422);
  });

  it("accepts an error body nested under `error`", async () => {
    const { client } = clientAnswering(() =>
      Response.json({ error: { code: "not_found", message: "no session s9" } }, { status: 404 }),
    );
    const error = await rejection(client.get("/api/sessions/s9"));
    expect([error.code, error.message]).toEqual(["not_found", "no session s9"]);
  });

  it("quotes a non-JSON error body with the status line", async () => {
    const { client } = clientAnswering(
      () => new Response("<h1>Bad gateway</h1>", { status: 502, statusText: "Bad Gateway" }),
    );
    const error = await rejection(client.get("/api/x"));
    expect(error.code).toBe("http_502");
    expect(error.message).toBe("The server answered 502 Bad Gateway: <h1>Bad gateway</h1>");
  });

  it("calls onUnauthorized on 401 and still rejects", async () => {
    const { client, onUnauthorized } = clientAnswering(() =>
      Response.json({ code: "unauthorized", message: "bad token" }, { status: 401 }),
    );
    const error = await rejection(client.get("/api/x"));
    expect(error.isUnauthorized).toBe(true);
    expect(onUnauthorized).toHaveBeenCalledWith(error);
  });

  it("names the server and the cause when nothing answers", async () => {
    const { client } = clientAnswering(() => Promise.reject(new TypeError("Failed to fetch")));
    const error = await rejection(client.get("/api/x"));
    expect(error.code).toBe("unreachable");
    expect(error.status).toBeNull();
    expect(error.message).toBe(
      "Could not reach the Paddock server at http://127.0.0.1:7420 (Failed to fetch). Is `paddock up` running?",
    );
  });

  it("lets an abort through as an abort", async () => {
    const { client } = clientAnswering(() =>
      Promise.reject(new DOMException("aborted", "AbortError")),
    );
    await expect(client.get("/api/x")).rejects.toMatchObject({ name: "AbortError" });
  });

  it("reports a success answer that is not JSON", async () => {
    const { client } = clientAnswering(() => new Response("ok", { status: 200 }));
    const error = await rejection(client.get("/api/x"));
    expect([error.code, error.message]).toEqual([
      "bad_response",
      "The server's answer to GET /api/x was not JSON.",
    ]);
  });
});
