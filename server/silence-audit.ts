/**
 * What a silence write (create / expire from the app) leaves: its audit entry (`audited`,
 * server/audit, whose entry is also the chart marker on the silenced service and handler) and one
 * line in the server log naming the action, the silence, its matchers and the client address.
 */
import { touchedList } from "@/lib/api/audit";
import { matchersText, type Silence } from "@/lib/api/silences";
import { clientAddress } from "@/server/access";
import { audited } from "@/server/audit";
import type { Principal } from "@/server/auth/principal";
import { config } from "@/server/config";
import { alertmanagerClient } from "@/server/observe/alertmanager/client";

/** A silence write done from the app. */
export type SilenceAction = "silence.create" | "silence.expire";

/** Records `action` on `silence` by the caller of `req` (see the module's hook note). */
export function recordSilenceWrite(req: Request, action: SilenceAction, silence: Silence): void {
  const from = clientAddress(req.headers, config().TRUSTED_PROXIES, config().TRUSTED_PROXY_HEADER) ?? "unknown";
  // What users typed is quoted (JSON): a newline in it cannot forge a log line.
  console.log(
    `[dedup-health] ${action} ${silence.id} ${JSON.stringify(matchersText(silence.matchers))} until ${silence.endsAt} by ${JSON.stringify(silence.createdBy)} from ${JSON.stringify(from)}: ${JSON.stringify(silence.comment)}`,
  );
}

/**
 * The creator a silence made by `p` carries: in proxy and oidc mode the user, whatever the body
 * said (Alertmanager's `createdBy` is otherwise free text); in token mode what was typed.
 */
export function silenceCreator(p: Principal, typed: string | undefined): string | undefined {
  return p.source === "proxy" || p.source === "oidc" ? p.name : typed;
}

/**
 * The service a silence already in Alertmanager concerns (its `service` equality matcher), for the
 * role check of expiring it; `[]` when it names none or Alertmanager cannot say (then only a
 * `*` grant may expire it).
 */
export async function silenceServices(id: string): Promise<string[]> {
  try {
    const s = await alertmanagerClient()?.silence(id);
    const service = s ? silenceScope(s).service : undefined;
    return service ? [service] : [];
  } catch {
    return [];
  }
}

/**
 * Runs a silence write of the caller of `req` (`filter`: the body or the id, as the audit entry
 * keeps it) inside its audit entry — refused unless the caller may write on `services` (none: the
 * whole app) — scoped to the silence's service and handler, with the silence's id as what it
 * touched (`touched.silenceId`), and logs it.
 */
export function auditedSilenceWrite(
  req: Request,
  action: SilenceAction,
  filter: object,
  services: readonly string[],
  write: (p: Principal) => Promise<{ silence: Silence }>,
): Promise<{ silence: Silence }> {
  return audited(
    req,
    action,
    filter,
    false,
    async (p) => {
      const r = await write(p);
      recordSilenceWrite(req, action, r.silence);
      return r;
    },
    // The silence's id: what the entry touched (a create's id is known only from its answer).
    (r) => ({ matched: null, changed: null, touched: { silenceId: touchedList([r.silence.id]) } }),
    (r) => silenceScope(r.silence),
    { services },
  );
}

/** The `service` / `handler` a silence concerns (its equality matchers on them), for its audit entry and chart marker. */
export function silenceScope(silence: Silence): Record<string, string> {
  const on = silence.matchers.filter((m) => m.isEqual && !m.isRegex && (m.name === "service" || m.name === "handler"));
  return Object.fromEntries(on.map((m) => [m.name, m.value]));
}
