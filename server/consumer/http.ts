/**
 * Helpers of the workshop / demo route handlers (`app/api/workshop/**`, `app/api/demo/**`): the
 * access guard, `{ error, detail }` answers, and zod-validated params and bodies.
 */
import type { z } from "zod";
import { config } from "@/server/config";
import { checkAccess, listenInfo, MAX_BODY_BYTES } from "@/server/access";
import { redactBody } from "@/server/redact";
import type { WorkshopErrorBody } from "@/lib/workshop-types";

const NO_STORE = { "Cache-Control": "no-store" };

/** A JSON answer that is never cached; upstream details in it are redacted (server/redact.ts). */
export function json(body: unknown, status = 200): Response {
  return Response.json(redactBody(body, config()), { status, headers: NO_STORE });
}

/** An error answer `{ error, detail }`. */
export function fail(status: number, error: WorkshopErrorBody["error"], detail: string, extra: Partial<WorkshopErrorBody> = {}): Response {
  return json({ error, detail, ...extra } satisfies WorkshopErrorBody, status);
}

/** The access rule of `server/access.ts`: null when allowed, else the 401/403 answer. */
export function guard(req: Request): Response | null {
  const d = checkAccess(req.headers, config(), listenInfo());
  return d.ok ? null : fail(d.status, d.error, d.detail);
}

/** Validates `value` with `schema`; the 400 answer names the first problem. */
export function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): { ok: true; value: T } | { ok: false; response: Response } {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return { ok: false, response: fail(400, "bad_request", `${what}: ${path}${issue?.message ?? "invalid"}`) };
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

/** Reads a JSON body (at most 16 KiB, else 413); a 400 answer when it is not JSON. */
export async function readJson(req: Request): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const text = await readCapped(req);
  if (text === null) return { ok: false, response: fail(413, "payload_too_large", `body: larger than ${MAX_BODY_BYTES} bytes`) };
  try {
    return { ok: true, value: text.trim() === "" ? {} : JSON.parse(text) };
  } catch {
    return { ok: false, response: fail(400, "bad_request", "body: not valid JSON (send Content-Type: application/json with a JSON object)") };
  }
}
