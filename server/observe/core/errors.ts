/**
 * The typed errors observe reads throw; the route kit (server/http.ts) maps each to its status.
 * They are the kit's own classes: one error vocabulary for every route.
 */
export {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  UpstreamUnavailableError,
} from "@/server/http";

/** Text of an unknown thrown value. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
