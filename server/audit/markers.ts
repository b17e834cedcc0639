/**
 * The audit trail as chart markers: every action that changed something (dry runs change nothing
 * and are left out) at the time it was recorded, with a one-line hover text, on the pages of the
 * service / handler it concerns. Read from the trail itself, so an action done by another process
 * sharing the PostgreSQL trail — `npm run dlq:replay`, another replica — is marked too; without
 * `DATABASE_URL` only this process's actions are.
 */
import type { AuditAction, AuditEntry } from "@/lib/api/audit";
import { MAX_MARKERS, type ChartEvent, type MarkerKind } from "@/lib/api/events";
import { auditStore } from "./index";

/** The marker kind of each audited action; an action not listed is drawn as `action`. */
const KIND_OF: Readonly<Record<AuditAction, MarkerKind>> = {
  "demo.faults": "fault",
  "demo.sources": "source",
  "silence.create": "silence",
  "silence.expire": "silence",
  "dlq.redrive": "replay",
  "dlq.replay": "replay",
  // Not a replay: records an engineer decided need none (no kind of its own on the charts).
  "dlq.discard": "action",
  "keys.forget": "keys",
  "keys.ttl": "keys",
  "workshop.run": "workshop",
};

/** What an entry's filter said, `k=v` joined (objects as JSON), for the titles of switches. */
function settings(filter: Readonly<Record<string, unknown>>): string {
  return Object.entries(filter)
    .map(([k, v]) => `${k}=${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(", ");
}

/** The action's outcome in words: what it changed, or that it failed. */
function outcome(e: AuditEntry, changed: string): string {
  if (e.result === "started") return " — started, not completed (in progress, or cut short)";
  if (e.result !== "ok") return ` — failed: ${e.result.replace(/^error: /, "")}`;
  return e.changed === null ? "" : `: ${e.changed} ${changed}${e.matched !== null ? ` of ${e.matched} matched` : ""}`;
}

/** The marker's hover text for one audit entry: what was done, its outcome, and by whom. */
export function auditTitle(e: AuditEntry): string {
  const f = e.filter;
  const target = e.scope.handler ? ` on ${e.scope.handler}` : "";
  const by = ` (by ${e.who})`;
  switch (e.action) {
    case "demo.faults":
      return `Demo store fault set: ${settings(f) || "unchanged"}${outcome(e, "")}${by}`;
    case "demo.sources":
      return `Demo source changed: ${settings(f) || "unchanged"}${outcome(e, "")}${by}`;
    case "silence.create":
      return `Silence created for ${String(f.alertname ?? "")}${target}: ${String(f.comment ?? "")}${outcome(e, "")}${by}`;
    case "silence.expire":
      return `Silence ${String(f.id ?? "")} expired${outcome(e, "")}${by}`;
    case "dlq.redrive":
      return `DLQ re-drive${target}${outcome(e, "re-driven")}${by}`;
    case "dlq.discard":
      return `DLQ records discarded${target}: ${String(f.why ?? "")}${outcome(e, "discarded")}${by}`;
    case "dlq.replay":
      return `DLQ replay (npm run dlq:replay) of ${String(f.topic ?? "the DLQ")}${outcome(e, "replayed")}${by}`;
    case "keys.forget":
      return `Keys forgotten${target}${outcome(e, "deleted")}${by}`;
    case "keys.ttl":
      return `Key TTL set to ${String(f.ttlMs ?? "?")} ms${target}${outcome(e, "changed")}${by}`;
    case "workshop.run":
      return `Workshop run started: ${String(f.name ?? "")}${outcome(e, "")}${by}`;
    default:
      return `${e.action}${target}${outcome(e, "changed")}${by}`;
  }
}

/** One audit entry as a chart marker, labelled with its scope (the pages it concerns) and action. */
export function auditMarker(e: AuditEntry): ChartEvent {
  return {
    at: e.at,
    kind: (KIND_OF as Readonly<Record<string, MarkerKind | undefined>>)[e.action] ?? "action",
    title: auditTitle(e),
    labels: { ...e.scope, action: e.action },
  };
}

/**
 * The markers of the audit entries that changed something between `from` and `to` and concern
 * `service` / `handler` (entries with no scope concern every page): the newest {@link MAX_MARKERS}.
 */
export async function auditMarkers(q: {
  from: Date;
  to: Date;
  service?: string;
  handler?: string;
}): Promise<ChartEvent[]> {
  const entries = await auditStore().list({ ...q, changesOnly: true, limit: MAX_MARKERS });
  return entries.map(auditMarker);
}
