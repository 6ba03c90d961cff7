import type { ErrorBody } from "@server/ErrorBody";

/**
 * Every failure of a call to the server, as one type the UI can show in place.
 *
 * The server answers errors as JSON with a stable `code` and a human `message`; anything else
 * (a proxy's HTML page, a dropped connection) is still turned into an `ApiError` whose message
 * says what happened, so no page ever shows a bare "Failed to fetch".
 */
export class ApiError extends Error {
  /** HTTP status, or `null` when no response arrived. */
  readonly status: number | null;
  /** The server's stable error code, or one of ours: `unreachable`, `bad_response`, `http_<status>`. */
  readonly code: string;

  constructor(code: string, message: string, status: number | null) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
  }

  /** The token was missing or refused: the UI asks for it again. */
  get isUnauthorized(): boolean {
    return this.status === 401;
  }
}

/** The longest server-supplied text kept from a response that was not the expected JSON. */
const MAX_QUOTED_BODY = 200;

/** Builds the error for a response whose status is not 2xx. */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  const parsed = parseErrorBody(text);
  if (parsed) {
    return new ApiError(parsed.code, parsed.message, response.status);
  }
  const statusLine = `${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  const quoted = text.trim().slice(0, MAX_QUOTED_BODY);
  const message = quoted
    ? `The server answered ${statusLine}: ${quoted}`
    : `The server answered ${statusLine}.`;
  return new ApiError(`http_${response.status}`, message, response.status);
}

/** The error for a request that got no response at all. */
export function unreachable(url: string, cause: unknown): ApiError {
  const detail = cause instanceof Error && cause.message ? ` (${cause.message})` : "";
  return new ApiError(
    "unreachable",
    `Could not reach the Paddock server at ${url}${detail}. Is \`paddock up\` running?`,
    null,
  );
}

/**
 * The server's `ErrorBody` (`{code, message}`, also accepted nested under `error`), or `null`
 * when the text is not one.
 */
export function parseErrorBody(text: string): ErrorBody | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const candidate = isRecord(value) && isRecord(value.error) ? value.error : value;
  if (
    isRecord(candidate) &&
    typeof candidate.code === "string" &&
    typeof candidate.message === "string"
  ) {
    return { code: candidate.code, message: candidate.message };
  }
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
