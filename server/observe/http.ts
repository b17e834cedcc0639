import type { z } from "zod";
import type { ErrorBody } from "@/lib/api-types";
import { config } from "@/server/config";
import { clientAddress, isLocalRequest, listenInfo } from "@/server/access";
import { redactBody } from "@/server/redact";
import { ObserveError, RateLimitedError } from "./errors";

const HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

/** A JSON response with `no-store` caching. */
export function json(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...extra } });
}

/** Reads a request's query into a plain object: the first value of each name, unknown names kept (the schema drops them). */
export function queryOf(req: Request): Record<string, string> {
  // No prototype: a parameter named __proto__ or constructor is just an (ignored) name.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let params: URLSearchParams;
  try {
    params = new URL(req.url).searchParams;
  } catch {
    return out;
  }
  for (const [k, v] of params) if (!Object.hasOwn(out, k)) out[k] = v;
  return out;
}

/** `"range: Invalid option: expected one of …; step: expected ≥ 1 s"`. */
export function describeIssues(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "query"}: ${i.message}`)
    .join("; ");
}

/**
 * Who a request is for the per-client limits: the forwarded client address (Next's copy of the
 * socket address when nothing was forwarded). **Advisory**: a client can forge it; the shared Redis
 * budget is the bound that holds (server/observe/redis-budget.ts).
 */
export function browseClient(req: Request): string {
  return clientAddress(req.headers, config().TRUSTED_PROXIES) ?? "unknown";
}

/**
 * Whether `req` may see upstream errors unredacted: only a local viewer (server/access.ts) and only
 * with `SHOW_UPSTREAM_DETAIL=on`.
 */
export function showsUpstreamDetail(req: Request): boolean {
  const c = config();
  return c.SHOW_UPSTREAM_DETAIL === "on" && isLocalRequest(req.headers, listenInfo(), c.TRUSTED_PROXIES);
}

/** {@link json} with every upstream detail in `body` redacted (server/redact.ts) unless {@link showsUpstreamDetail}. */
export function redactedJson(req: Request, status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return json(status, showsUpstreamDetail(req) ? body : redactBody(body, config()), extra);
}

/**
 * The body of every dashboard route: parse the query with `schema` (a bad value → 400
 * `{ error: "bad_request", detail }`, unknown parameters ignored), run `fn`, and map typed
 * {@link ObserveError}s to their status. Anything else is a 500 whose detail hides internals.
 * Upstream details in the answer (ok or error) are redacted, see {@link redactedJson}.
 */
export async function handleQuery<S extends z.ZodType>(req: Request, schema: S, fn: (q: z.output<S>) => Promise<unknown> | unknown): Promise<Response> {
  const parsed = schema.safeParse(queryOf(req));
  if (!parsed.success) return json(400, { error: "bad_request", detail: describeIssues(parsed.error) } satisfies ErrorBody);
  try {
    return redactedJson(req, 200, await fn(parsed.data));
  } catch (e) {
    if (e instanceof ObserveError) {
      const extra: Record<string, string> = e instanceof RateLimitedError ? { "retry-after": String(e.retryAfterSeconds) } : {};
      return redactedJson(req, e.status, { error: e.code, detail: e.message } satisfies ErrorBody, extra);
    }
    console.error("[observe] unexpected error", e);
    return json(500, { error: "internal", detail: "unexpected server error; see the server log" } satisfies ErrorBody);
  }
}
