/**
 * A POST from a machine with its own token (Alertmanager), not a user: no user access rule applies
 * (server/http.ts `handleBody` would ask for a user's role); the token check comes first, then the
 * capped JSON body, validated. Every refusal is `{ error, detail }`.
 */
import type { z } from "zod";
import { answer, describeIssues, errorAnswer, fail, readJson } from "@/server/http";

/**
 * 401 with `refusal` when set; else the body read under the cap (413 / 400), validated with
 * `schema` (400 naming the first problems), then `fn`'s result as the answer (typed errors → their status).
 */
export async function handleMachineBody<S extends z.ZodType>(
  req: Request,
  refusal: string | null,
  schema: S,
  fn: (body: z.output<S>) => Promise<unknown>,
): Promise<Response> {
  if (refusal) return fail(req, 401, "unauthorized", refusal);
  const body = await readJson(req);
  if (!body.ok) return body.response;
  const parsed = schema.safeParse(body.value);
  if (!parsed.success) return fail(req, 400, "bad_request", describeIssues(parsed.error, "body"));
  try {
    return answer(req, await fn(parsed.data));
  } catch (e) {
    return errorAnswer(req, e);
  }
}
