import type { z } from "zod";
import type { ErrorBody } from "@/lib/api-types";
import { ObserveError } from "./errors";

const HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

/** A JSON response with `no-store` caching. */
export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: HEADERS });
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
 * The body of every dashboard route: parse the query with `schema` (a bad value → 400
 * `{ error: "bad_request", detail }`, unknown parameters ignored), run `fn`, and map typed
 * {@link ObserveError}s to their status. Anything else is a 500 whose detail hides internals.
 */
export async function handleQuery<S extends z.ZodType>(req: Request, schema: S, fn: (q: z.output<S>) => Promise<unknown> | unknown): Promise<Response> {
  const parsed = schema.safeParse(queryOf(req));
  if (!parsed.success) return json(400, { error: "bad_request", detail: describeIssues(parsed.error) } satisfies ErrorBody);
  try {
    return json(200, await fn(parsed.data));
  } catch (e) {
    if (e instanceof ObserveError) return json(e.status, { error: e.code, detail: e.message } satisfies ErrorBody);
    console.error("[observe] unexpected error", e);
    return json(500, { error: "internal", detail: "unexpected server error; see the server log" } satisfies ErrorBody);
  }
}
