import { ApiError, errorFromResponse, unreachable } from "./errors";

/** What a request may carry besides its method and path. */
export interface RequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Appended as a query string; `undefined` values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
}

export interface ApiClientOptions {
  /** Origin (and optional path prefix) of the server, e.g. `http://127.0.0.1:8420`. */
  baseUrl: string;
  /** The bearer token, read on every request so a new sign-in applies at once. */
  token: () => string | null;
  /** Called when the server refuses the token (401), e.g. to show the sign-in form again. */
  onUnauthorized?: (error: ApiError) => void;
  fetch?: typeof fetch;
}

/**
 * The HTTP half of the typed API layer: JSON in and out, the bearer token on every request,
 * every failure an `ApiError`. The resource functions built on it take their payload types from
 * the generated bindings, never from hand-written shapes.
 */
export class ApiClient {
  readonly baseUrl: string;
  private readonly options: ApiClientOptions;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ApiClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  get<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>("GET", path, options);
  }

  post<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>("POST", path, options);
  }

  patch<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>("PATCH", path, options);
  }

  put<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>("PUT", path, options);
  }

  delete<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>("DELETE", path, options);
  }

  /** The absolute URL of `path` with `query`. */
  url(path: string, query?: RequestOptions["query"]): string {
    const url = new URL(this.baseUrl + (path.startsWith("/") ? path : `/${path}`));
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) {
        url.searchParams.set(key, String(value));
      }
    }
    return url.toString();
  }

  /**
   * Sends one request and returns its JSON body (`undefined` for an empty one). The raw
   * `Response` is available through `send` for streamed downloads such as audit exports.
   */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status === 204) {
      return undefined as T;
    }
    const text = await response.text();
    if (text === "") {
      // 202 Accepted and the like: the effects arrive as events.
      return undefined as T;
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiError(
        "bad_response",
        `The server's answer to ${method} ${path} was not JSON.`,
        response.status,
      );
    }
  }

  /** Sends one request and returns the successful `Response` unread. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = this.url(path, options.query);
    const headers = new Headers({ Accept: "application/json" });
    const token = this.options.token();
    if (token) {
      headers.set("Authorization", `Bearer ${token}`);
    }
    const init: RequestInit = { method, headers, credentials: "omit" };
    if (options.body !== undefined) {
      headers.set("Content-Type", "application/json");
      init.body = JSON.stringify(options.body);
    }
    if (options.signal) {
      init.signal = options.signal;
    }
    let response: Response;
    try {
      response = await this.fetchImpl(url, init);
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === "AbortError") {
        throw cause;
      }
      throw unreachable(this.baseUrl, cause);
    }
    if (!response.ok) {
      const error = await errorFromResponse(response);
      if (error.isUnauthorized) {
        this.options.onUnauthorized?.(error);
      }
      throw error;
    }
    return response;
  }
}
