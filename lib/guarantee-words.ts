/**
 * The crash storm's guarantees in the UI's words, written once (isomorphic, no zod): each one's
 * name, and what its tile says — the duplicate side effects measured in the run, or why there is
 * no figure ("not run: no PostgreSQL configured …"): unknown is never shown as 0.
 */
import type { Guarantee, GuaranteeRun } from "@/lib/api/workshop";
import { formatNumber } from "./format";

/** Each guarantee's name on the page. */
export const GUARANTEE_LABEL: Readonly<Record<Guarantee, string>> = {
  redis: "Redis dedup",
  inbox: "PostgreSQL inbox",
  transactions: "Kafka transactions",
};

/** A guarantee tile's headline: the duplicate side effects when measured, else its state and reason. */
export function guaranteeHeadline(g: GuaranteeRun): string {
  switch (g.status) {
    case "measured":
      return formatNumber(g.summary.duplicateSideEffects);
    case "running":
      return `running… ${formatNumber(g.crashes)} crash${g.crashes === 1 ? "" : "es"} so far`;
    case "not-run":
      return `not run: ${g.reason}`;
    case "failed":
      return `not measured: ${g.reason}`;
  }
}

/**
 * The line under a measured guarantee's headline: "60 side effects of 76 handler calls · 0 lost ·
 * 3 crashes · 12 deduplicated" — more calls than effects: the crashes made it run things again.
 */
export function guaranteeDetail(g: Extract<GuaranteeRun, { status: "measured" }>): string {
  const s = g.summary;
  const n = (v: number, one: string, many = `${one}s`) => `${formatNumber(v)} ${v === 1 ? one : many}`;
  return [
    `${n(s.sideEffects, "side effect")} of ${n(s.handlerCalls, "handler call")}`,
    `${formatNumber(s.lost)} lost`,
    n(g.crashes, "crash", "crashes"),
    `${formatNumber(s.deduplicated)} deduplicated`,
  ].join(" · ");
}
