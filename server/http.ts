/**
 * The one HTTP kit of the route handlers (`app/api/**`): JSON answers (`json(body, status)`),
 * the `{ error, detail }` body ({@link ErrorBody}, lib/api/common.ts), typed errors mapped to their
 * status, and the preamble every route shares, written once: the access guard of state-changing
 * calls, the streamed 16 KiB body cap, zod validation of query, path params and body.
 *
 * Where each security check lives, so none is written twice:
 * - cross-site callers, non-JSON content types, a `Content-Length` over the cap: proxy.ts, before
 *   any route runs;
 * - who may change state: in token mode (token / this machine / read-only) server/access.ts, applied
 *   here by {@link guard}; in proxy/oidc mode {@link writeGuard} lets only a named user on, and
 *   `audited` (server/audit) checks its role for the service the action concerns;
 * - a body over the cap without a `Content-Length` (chunked): {@link readJson}, streamed;
 * - the key browser's per-client and shared Redis budget: server/observe/keys/budget.ts
 *   (a {@link RateLimitedError} → 429 with `Retry-After`);
 * - upstream details in answers: redacted (server/redact.ts) unless {@link showsUpstreamDetail}.
 */
import type { z } from "zod";
import type { ErrorBody } from "@/lib/api/common";
import { config } from "@/server/config";
import { checkAccess, clientAddress, isLocalRequest, listenInfo, MAX_BODY_BYTES } from "@/server/access";
import { principalOf } from "@/server/auth/principal";
import { redactBody } from "@/server/redact";
import { tokenFailures } from "@/server/token-failures";
import { asHttpError } from "@/server/http-errors";

export {
  BadRequestError,
  ForbiddenError,
  HttpError,
  NotFoundError,
  RateLimitedError,
  UpstreamUnavailableError,
} from "@/server/http-errors";

const HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

/** A JSON answer that is never cached, as is (see {@link answer} for one that redacts). */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...headers } });
}

/**
 * Whether `req` may see upstream errors unredacted: only a local viewer (server/access.ts) and only
 * with `SHOW_UPSTREAM_DETAIL=on`.
 */
export function showsUpstreamDetail(req: Request): boolean {
  const c = config();
  return c.SHOW_UPSTREAM_DETAIL === "on" && isLocalRequest(req.headers, listenInfo(), c.TRUSTED_PROXY_HEADER);
}

/**
 * The redacted JSON text of each shared answer object (the overview, the series… are one object
 * for every viewer for about a second): redacting and serialising 200 handlers costs ~4 ms, so it
 * is done once per answer, not once per viewer (`npm run bench:fleet`).
 */
const redactedText = new WeakMap<object, string>();

/** {@link json} with every upstream detail in `body` redacted (server/redact.ts) unless {@link showsUpstreamDetail}. */
export function answer(req: Request, body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  if (showsUpstreamDetail(req)) return json(body, status, headers);
  if (body === null || typeof body !== "object") return json(redactBody(body, config()), status, headers);
  let text = redactedText.get(body);
  if (text === undefined) redactedText.set(body, (text = JSON.stringify(redactBody(body, config()))));
  return new Response(text, { status, headers: { ...HEADERS, ...headers } });
}

/** An error answer `{ error, detail }` (redacted like any answer). */
export function fail(
  req: Request,
  status: number,
  error: ErrorBody["error"],
  detail: string,
  extra: Pick<ErrorBody, "runId"> = {},
): Response {
  return answer(req, { error, detail, ...extra } satisfies ErrorBody, status);
}

/** The answer to what a route threw: a typed error's status and code, else a 500 that hides internals. */
export function errorAnswer(req: Request, e: unknown): Response {
  const h = asHttpError(e);
  if (h) {
    const headers: Record<string, string> =
      typeof h.retryAfterSeconds === "number" ? { "retry-after": String(h.retryAfterSeconds) } : {};
    const body: ErrorBody = {
      error: h.code,
      detail: h.message,
      ...(typeof h.runId === "string" ? { runId: h.runId } : {}),
    };
    return answer(req, body, h.status, headers);
  }
  console.error("[api] unexpected error", e);
  return json({ error: "internal", detail: "unexpected server error; see the server log" } satisfies ErrorBody, 500);
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

/** `"range: Invalid option: expected one of …; step: expected ≥ 1 s"` (`what` names an issue without a path). */
export function describeIssues(err: z.ZodError, what = "query"): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || what}: ${i.message}`)
    .join("; ");
}

/**
 * Who a request is for the per-client limits: the forwarded client address (Next's copy of the
 * socket address when nothing was forwarded). **Advisory**: a client can forge it; the shared Redis
 * budget is the bound that holds (server/observe/keys/budget.ts).
 */
export function browseClient(req: Request): string {
  return clientAddress(req.headers, config().TRUSTED_PROXIES, config().TRUSTED_PROXY_HEADER) ?? "unknown";
}

/**
 * The access rule of `server/access.ts` for a state-changing call: null when allowed, else the
 * 401/403 answer; 429 while too many wrong tokens were sent lately (server/token-failures.ts).
 */
export function guard(req: Request): Response | null {
  const c = config();
  const presented = c.WORKSHOP_TOKEN !== undefined && req.headers.has("authorization");
  if (presented) {
    const wait = tokenFailures().retryAfterSeconds();
    if (wait > 0)
      return answer(
        req,
        { error: "rate_limited", detail: `too many wrong tokens lately; try again in ${wait} s` } satisfies ErrorBody,
        429,
        { "retry-after": String(wait) },
      );
  }
  const d = checkAccess(req.headers, c, listenInfo());
  if (!d.ok && d.status === 401 && presented) tokenFailures().failed();
  return d.ok ? null : fail(req, d.status, d.error, d.detail);
}

/**
 * The first gate of every state-changing call, by `AUTH_MODE`: token mode is {@link guard}; in
 * proxy and oidc mode an anonymous caller (no trusted proxy named it, no valid session) is a 401,
 * a signed-in one passes here and its role is checked per service by `audited` (server/audit),
 * which also records a refusal.
 */
export async function writeGuard(req: Request): Promise<Response | null> {
  const mode = config().AUTH_MODE;
  if (mode === "token") return guard(req);
  const p = await principalOf(req);
  if (p.source !== "anonymous") return null;
  const how =
    mode === "proxy"
      ? "this endpoint needs a user named by a trusted proxy (AUTH_MODE=proxy: sign in through the proxy in front of the app)"
      : "sign in first (AUTH_MODE=oidc: /api/auth/login)";
  return fail(req, 401, "unauthorized", `anonymous: ${how}`);
}

/**
 * Reads the body as a stream and stops at {@link MAX_BODY_BYTES}: a larger body is never buffered
 * whole (a chunked upload has no Content-Length for proxy.ts to refuse).
 */
async function readCapped(req: Request): Promise<string | null> {
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads a JSON body (at most {@link MAX_BODY_BYTES}, else 413); a 400 answer when it is not JSON. */
export async function readJson(
  req: Request,
): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const text = await readCapped(req);
  if (text === null)
    return { ok: false, response: fail(req, 413, "payload_too_large", `body: larger than ${MAX_BODY_BYTES} bytes`) };
  try {
    return { ok: true, value: text.trim() === "" ? {} : JSON.parse(text) };
  } catch {
    return {
      ok: false,
      response: fail(
        req,
        400,
        "bad_request",
        "body: not valid JSON (send Content-Type: application/json with a JSON object)",
      ),
    };
  }
}

/** Validates `value` with `schema`; the 400 answer names the first problem, prefixed by `what` ("body", "name"…). */
function parse<S extends z.ZodType>(
  req: Request,
  schema: S,
  value: unknown,
  what: string,
): { ok: true; value: z.output<S> } | { ok: false; response: Response } {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return { ok: false, response: fail(req, 400, "bad_request", `${what}: ${path}${issue?.message ?? "invalid"}`) };
}

async function run(req: Request, fn: () => Promise<unknown> | unknown, status: number): Promise<Response> {
  try {
    return answer(req, await fn(), status);
  } catch (e) {
    return errorAnswer(req, e);
  }
}

/**
 * A read route: parse the query with `schema` (a bad value → 400 `{ error: "bad_request", detail }`,
 * unknown parameters ignored), run `fn`, answer 200 with its result; typed errors → their status
 * ({@link errorAnswer}). Upstream details in the answer (ok or error) are redacted ({@link answer}).
 */
export async function handleQuery<S extends z.ZodType>(
  req: Request,
  schema: S,
  fn: (q: z.output<S>) => Promise<unknown> | unknown,
): Promise<Response> {
  const parsed = schema.safeParse(queryOf(req));
  if (!parsed.success) return fail(req, 400, "bad_request", describeIssues(parsed.error));
  return run(req, () => fn(parsed.data), 200);
}

/** Options of {@link handleParams}. */
export interface ParamsOptions {
  /** A state-changing call: the access {@link guard} runs first. @default false */
  write?: boolean;
  /** Status of a successful answer. @default 200 */
  status?: number;
}

/**
 * A route on path parameters (`[name]`, `[runId]`): the guard when `write`, the params validated
 * with `schema` (400 names the parameter), then `fn`; typed errors → their status.
 */
export async function handleParams<S extends z.ZodType>(
  req: Request,
  params: Promise<unknown> | unknown,
  schema: S,
  fn: (p: z.output<S>) => Promise<unknown> | unknown,
  options: ParamsOptions = {},
): Promise<Response> {
  if (options.write) {
    const denied = await writeGuard(req);
    if (denied) return denied;
  }
  const value = await params;
  const p = parse(req, schema, value, "path");
  if (!p.ok) return p.response;
  return run(req, () => fn(p.value), options.status ?? 200);
}

/**
 * A state-changing route with a JSON body: the access {@link guard}, the body read under the cap
 * ({@link readJson}: 413 / 400), validated with `schema` (400 names the field), then `fn`; typed
 * errors → their status.
 */
export async function handleBody<S extends z.ZodType>(
  req: Request,
  schema: S,
  fn: (body: z.output<S>) => Promise<unknown> | unknown,
  status = 200,
): Promise<Response> {
  const denied = await writeGuard(req);
  if (denied) return denied;
  const body = await readJson(req);
  if (!body.ok) return body.response;
  const p = parse(req, schema, body.value, "body");
  if (!p.ok) return p.response;
  return run(req, () => fn(p.value), status);
}
