/**
 * What a silence write (create / expire from the app) leaves: its audit entry (`audited`,
 * server/audit, whose entry is also the chart marker on the silenced service and handler) and one
 * line in the server log naming the action, the silence, its matchers and the client address.
 */
import { touchedList } from "@/lib/api/audit";
import { matchersText, type Silence } from "@/lib/api/silences";
import { clientAddress } from "@/server/access";
import { audited } from "@/server/audit";
import { config } from "@/server/config";

/** A silence write done from the app. */
export type SilenceAction = "silence.create" | "silence.expire";

/** Records `action` on `silence` by the caller of `req` (see the module's hook note). */
export function recordSilenceWrite(req: Request, action: SilenceAction, silence: Silence): void {
  const who = clientAddress(req.headers, config().TRUSTED_PROXIES) ?? "unknown";
  console.log(`[dedup-health] ${action} ${silence.id} {${matchersText(silence.matchers)}} until ${silence.endsAt} by ${silence.createdBy} from ${who}: ${JSON.stringify(silence.comment)}`);
}

/**
 * Runs a silence write of the caller of `req` (`filter`: the body or the id, as the audit entry
 * keeps it) inside its audit entry, scoped to the silence's service and handler, with the silence's
 * id as what it touched (`touched.silenceId`), and logs it.
 */
export function auditedSilenceWrite(req: Request, action: SilenceAction, filter: object, write: () => Promise<{ silence: Silence }>): Promise<{ silence: Silence }> {
  return audited(
    req,
    action,
    filter,
    false,
    async () => {
      const r = await write();
      recordSilenceWrite(req, action, r.silence);
      return r;
    },
    // The silence's id: what the entry touched (a create's id is known only from its answer).
    (r) => ({ matched: null, changed: null, touched: { silenceId: touchedList([r.silence.id]) } }),
    (r) => silenceScope(r.silence),
  );
}

/** The `service` / `handler` a silence concerns (its equality matchers on them), for its audit entry and chart marker. */
export function silenceScope(silence: Silence): Record<string, string> {
  const on = silence.matchers.filter((m) => m.isEqual && !m.isRegex && (m.name === "service" || m.name === "handler"));
  return Object.fromEntries(on.map((m) => [m.name, m.value]));
}
