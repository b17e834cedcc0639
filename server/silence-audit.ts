/**
 * What a silence write (create / expire from the app) leaves besides the audit trail (the routes
 * wrap it in `audited`, server/audit): a chart marker, and one line in the server log naming the
 * action, the silence, its matchers and the client address.
 */
import { matchersText, type Silence } from "@/lib/api/silences";
import { clientAddress } from "@/server/access";
import { config } from "@/server/config";
import { recordEvent } from "@/server/observe/events";

/** A silence write done from the app. */
export type SilenceAction = "silence.create" | "silence.expire";

/** Records `action` on `silence` by the caller of `req` (see the module's hook note). */
export function recordSilenceWrite(req: Request, action: SilenceAction, silence: Silence): void {
  const who = clientAddress(req.headers, config().TRUSTED_PROXIES) ?? "unknown";
  // A chart marker on the pages the silence concerns.
  const labels = Object.fromEntries(silence.matchers.filter((m) => m.isEqual && !m.isRegex).map((m) => [m.name, m.value]));
  recordEvent("silence", `Silence ${action === "silence.create" ? "created" : "expired"}: {${matchersText(silence.matchers)}}`, labels);
  console.log(`[dedup-health] ${action} ${silence.id} {${matchersText(silence.matchers)}} until ${silence.endsAt} by ${silence.createdBy} from ${who}: ${JSON.stringify(silence.comment)}`);
}
