/**
 * The typed errors a route throws and server/http.ts maps to their status and `{ error, detail }`
 * answer (re-exported there, where routes and server/observe import them from).
 */
import { ERROR_CODES, type ErrorBody } from "@/lib/api/common";

/** Base of the errors a route maps to a status: `status` and `code` go into the answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorBody["error"],
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The base of an {@link HttpError} whose status and code are always the same: `new XxxError(message)`. */
function fixedStatusError(status: number, code: ErrorBody["error"]) {
  return class extends HttpError {
    constructor(message: string) {
      super(status, code, message);
    }
  };
}

/** A parameter or body field is invalid: 400. The message says which and what is expected. */
export class BadRequestError extends fixedStatusError(400, "bad_request") {}

/** The thing asked for does not exist (or is outside the configured prefixes): 404. */
export class NotFoundError extends fixedStatusError(404, "not_found") {}

/** The caller may not touch this thing (a topic outside `CONSUMER_TOPICS` and their DLQs…): 403. */
export class ForbiddenError extends fixedStatusError(403, "forbidden") {}

/** The upstream a route cannot answer without is down or not configured: 503. */
export class UpstreamUnavailableError extends fixedStatusError(503, "unavailable") {}

/** Too many calls (the Redis budget or the per-client concurrency of the key browser): 429 with `Retry-After`. */
export class RateLimitedError extends HttpError {
  constructor(
    message: string,
    /** Whole seconds the caller should wait (the `Retry-After` header). */
    readonly retryAfterSeconds: number,
  ) {
    super(429, "rate_limited", message);
  }
}

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/**
 * An {@link HttpError}, recognised by shape rather than `instanceof`: a route may meet an error
 * class from another bundle's copy of its module (instrumentation.ts and each route are bundled apart).
 */
export function asHttpError(e: unknown): (HttpError & { retryAfterSeconds?: unknown; runId?: unknown }) | null {
  if (!(e instanceof Error)) return null;
  const h = e as Partial<HttpError>;
  return typeof h.status === "number" &&
    h.status >= 400 &&
    h.status < 600 &&
    typeof h.code === "string" &&
    CODES.has(h.code)
    ? (e as HttpError)
    : null;
}
