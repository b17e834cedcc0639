/** The route builders of `/api/silences` (lib/api/silences.ts): Alertmanager's silences listed, created, expired. */
import type { AlertmanagerPart, Silence, SilenceCreate } from "@/lib/api/silences";
import { HttpError } from "@/server/http";
import { errorText } from "../core/errors";
import { alertmanagerClient, NOT_CONFIGURED, requireClient } from "../alertmanager/client";

/** Builds `GET /api/silences`: Alertmanager's silences in force or scheduled (what `amtool silence query` lists; `expired`: those too), or why there are none. */
export async function getSilences(expired = false): Promise<{ generatedAt: string; alertmanager: AlertmanagerPart }> {
  const client = alertmanagerClient();
  const generatedAt = new Date().toISOString();
  if (!client) return { generatedAt, alertmanager: { status: "not-configured", detail: NOT_CONFIGURED } };
  try {
    const all = await client.silences();
    return {
      generatedAt,
      alertmanager: { status: "ok", silences: expired ? all : all.filter((s) => s.state !== "expired") },
    };
  } catch (e) {
    return { generatedAt, alertmanager: { status: "unavailable", detail: errorText(e) } };
  }
}

/** Silences in force or scheduled per service that `POST /api/silences` allows (then 409). */
export const SILENCES_PER_SERVICE_MAX = 20;

/**
 * Builds `POST /api/silences`: creates the silence and answers it as Alertmanager lists it; 409 when the
 * service already has {@link SILENCES_PER_SERVICE_MAX} silences in force or scheduled (a page that
 * mutes everything one by one is a mistake or an attack either way; durations are capped by the schema).
 */
export async function createSilence(s: SilenceCreate): Promise<{ silence: Silence }> {
  const c = requireClient();
  const open = (await c.silences()).filter(
    (x) =>
      x.state !== "expired" &&
      x.matchers.some((m) => m.name === "service" && m.isEqual !== false && !m.isRegex && m.value === s.service),
  );
  if (open.length >= SILENCES_PER_SERVICE_MAX) {
    throw new HttpError(
      409,
      "conflict",
      `service ${s.service} already has ${open.length} silences in force or scheduled (at most ${SILENCES_PER_SERVICE_MAX}); expire one first (the alerts page, or amtool silence expire)`,
    );
  }
  const id = await c.createSilence(s);
  return { silence: await c.silence(id) };
}

/** Builds `DELETE /api/silences/{id}`: expires the silence and answers it as Alertmanager lists it. */
export async function expireSilence(id: string): Promise<{ silence: Silence }> {
  const c = requireClient();
  const before = await c.silence(id);
  if (before.state !== "expired") await c.expireSilence(id);
  return { silence: await c.silence(id) };
}
