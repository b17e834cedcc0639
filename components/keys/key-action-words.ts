/** The words of a key action's selection, for its confirmation and its outcome. Isomorphic, pure. */
import type { Selection } from "@/lib/api/key-actions";

/** `12000` → `12 s`, `90000` → `1.5 min`, `7200000` → `2 h`. */
export function durationWords(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 6000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** The selection restated: `in state processing, idle ≥ 12 s, leases of dead owners only`, or `named by the 3 UUIDs given`. */
export function selectionWords(s: Selection): string {
  const parts: string[] = [];
  if (s.uuids !== null) parts.push(`named by the ${s.uuids} UUID${s.uuids === 1 ? "" : "s"} given`);
  if (s.state !== null) parts.push(s.state === "any" ? "in any state" : `in state ${s.state}`);
  if (s.olderThanMs !== null) parts.push(`idle ≥ ${durationWords(s.olderThanMs)}`);
  if (s.state !== "done" && s.leases === "dead") parts.push("leases of dead owners only");
  if (s.state !== "done" && s.leases === "all") parts.push("leases of live owners included");
  return parts.join(", ");
}

/** `12:01:03` of an ISO time, in the viewer's time zone. */
export function clockOf(iso: string): string {
  return new Date(iso).toLocaleTimeString("en-GB", { hour12: false });
}

/** The confirmation of a real action: what it does to exactly which keys, and which dry run listed them. */
export function confirmText(verb: string, matched: number, prefix: string, s: Selection, previewAt: string): string {
  return `${verb} ${matched} key${matched === 1 ? "" : "s"} of ${prefix} ${selectionWords(s)}, as listed by the dry run at ${clockOf(previewAt)}?`;
}
