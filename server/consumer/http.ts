/**
 * Helpers of the workshop / demo route handlers (`app/api/workshop/**`, `app/api/demo/**`): the
 * access guard, `{ error, detail }` answers, and zod-validated params and bodies.
 */
import type { z } from "zod";
import { config } from "@/server/config";
import { checkAccess } from "@/server/access";
import type { WorkshopErrorBody } from "@/lib/workshop-types";

const NO_STORE = { "Cache-Control": "no-store" };

/** A JSON answer that is never cached. */
export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: NO_STORE });
}

/** An error answer `{ error, detail }`. */
export function fail(status: number, error: WorkshopErrorBody["error"], detail: string, extra: Partial<WorkshopErrorBody> = {}): Response {
  return json({ error, detail, ...extra } satisfies WorkshopErrorBody, status);
}

/** The access rule of `server/access.ts`: null when allowed, else the 401/403 answer. */
export function guard(req: Request): Response | null {
  const d = checkAccess(req.headers, config());
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

/** Reads a JSON body (at most 16 KiB); a 400 answer when it is not JSON. */
export async function readJson(req: Request): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const text = await req.text();
  if (text.length > 16_384) return { ok: false, response: fail(400, "bad_request", "body: larger than 16 KiB") };
  try {
    return { ok: true, value: text.trim() === "" ? {} : JSON.parse(text) };
  } catch {
    return { ok: false, response: fail(400, "bad_request", "body: not valid JSON (send Content-Type: application/json with a JSON object)") };
  }
}
