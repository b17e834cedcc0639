import type { ErrorBody } from "@/lib/api-types";

/** Base of the errors the routes map to status codes; `status` and `code` go into the response. */
export class ObserveError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorBody["error"],
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A parameter is invalid: 400. The message says which and what is expected. */
export class BadRequestError extends ObserveError {
  constructor(message: string) {
    super(400, "bad_request", message);
  }
}

/** The thing asked for does not exist (or is outside the configured prefixes): 404. */
export class NotFoundError extends ObserveError {
  constructor(message: string) {
    super(404, "not_found", message);
  }
}

/** The upstream a route cannot answer without is down or not configured: 503. */
export class UpstreamUnavailableError extends ObserveError {
  constructor(message: string) {
    super(503, "unavailable", message);
  }
}

/** Too many calls (the Redis budget or the per-client concurrency of the key browser): 429 with `Retry-After`. */
export class RateLimitedError extends ObserveError {
  constructor(
    message: string,
    /** Whole seconds the caller should wait (the `Retry-After` header). */
    readonly retryAfterSeconds: number,
  ) {
    super(429, "rate_limited", message);
  }
}

/** Text of an unknown thrown value. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
