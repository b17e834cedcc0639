/** The clauses on what the consumer exports: zero series, metric and label names, dedup_handler_info, hot UUIDs, processed counts. */
import { HANDLER_TIME_BUCKETS, CHECK_DURATION_BUCKETS } from "@/server/dedup";
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  HOT_UUID_METRICS,
  HOT_UUID_TOP_K,
  METRIC_LABELS,
  METRIC_NAMES,
  POISON_REASON_CLASSES,
  PROCESSED_RESULTS,
  SLOW_CHECK_SECONDS,
} from "@/names/dedup";
import { HANDLER_INFO_LABEL, HANDLER_INFO_METRIC, INFO_MARKING } from "@/names/contract";
import { dedupKeyPrefix } from "@/names/keys";
import { type Evidence, processedDelta } from "./evidence";
import type { Scrape } from "./exposition";
import { broken, held, info, unknown, who, type Verdict } from "./judging";

/** The series each label value must have at 0 before its first event (docs/CONTRACT.md, zero series). */
export function zeroSeriesMissing(s: Scrape, e: Evidence): string[] {
  const w = who(e);
  const want: [string, Record<string, string>][] = [
    [METRIC_NAMES.deduplicated, w],
    ...PROCESSED_RESULTS.map((result): [string, Record<string, string>] => [METRIC_NAMES.processed, { ...w, result }]),
    ...DEDUP_ERROR_REASONS.map((reason): [string, Record<string, string>] => [
      METRIC_NAMES.errors,
      { service: e.o.service, reason },
    ]),
    // The claim round trips' histogram, per service: otherwise the checks before its first scrape are its birth, unseen by rate().
    [`${METRIC_NAMES.checkDuration}_count`, { service: e.o.service }],
  ];
  // Families beyond the design note's four: each label value at 0 when the family is exported at all.
  if (s.series(METRIC_NAMES.poisoned, w).length > 0)
    for (const r of POISON_REASON_CLASSES) want.push([METRIC_NAMES.poisoned, { ...w, reason_poisoned: r }]);
  if (s.series(METRIC_NAMES.duplicatesByCause, w).length > 0)
    for (const cause of DUPLICATE_CAUSES) want.push([METRIC_NAMES.duplicatesByCause, { ...w, cause }]);
  return want
    .filter(([n, m]) => s.series(n, m).length === 0)
    .map(
      ([n, m]) =>
        `${n}{${Object.entries(m)
          .map(([k, v]) => `${k}="${v}"`)
          .join(",")}}`,
    );
}

/** The library's metrics whose series must exist after a run, and the label names each must carry. */
export function metricsProblems(e: Evidence): string[] {
  const s = e.scrapes.final;
  const out: string[] = [];
  // Born at their first event, or (the fingerprint fallbacks) only for a handler that chose fingerprint fields.
  const eventOnly = new Set<string>([
    METRIC_NAMES.lastError,
    METRIC_NAMES.lastSlowCheck,
    METRIC_NAMES.fingerprintFallbacks,
  ]);
  for (const [k, name] of Object.entries(METRIC_NAMES) as [keyof typeof METRIC_NAMES, string][]) {
    const labels = METRIC_LABELS[k] as readonly string[];
    const histogram = k === "checkDuration" || k === "handlerExecutionTime";
    const family = s.samples.filter(
      (x) =>
        (histogram ? x.name === `${name}_count` || x.name === `${name}_bucket` : x.name === name) &&
        x.labels.service === e.o.service,
    );
    const mine = labels.includes("handler") ? family.filter((x) => x.labels.handler === e.o.handler) : family;
    if (mine.length === 0) {
      if (!eventOnly.has(name)) out.push(`${name} missing`);
      continue;
    }
    const bad = mine.find(
      (x) =>
        Object.keys(x.labels)
          .filter((l) => l !== "le")
          .sort()
          .join(",") !== [...labels].sort().join(","),
    );
    if (bad)
      out.push(`${name} has labels {${Object.keys(bad.labels).join(",")}}, the contract's are {${labels.join(",")}}`);
  }
  const slow = s
    .series(`${METRIC_NAMES.checkDuration}_bucket`, { service: e.o.service })
    .some((x) => Number(x.labels.le) === SLOW_CHECK_SECONDS);
  if (!slow && s.series(`${METRIC_NAMES.checkDuration}_bucket`, { service: e.o.service }).length > 0)
    out.push(`${METRIC_NAMES.checkDuration} has no bucket le="${SLOW_CHECK_SECONDS}" (the latency alert's threshold)`);
  for (const [name, want] of [
    [METRIC_NAMES.checkDuration, CHECK_DURATION_BUCKETS],
    [METRIC_NAMES.handlerExecutionTime, HANDLER_TIME_BUCKETS],
  ] as const) {
    const les = [...new Set(s.series(`${name}_bucket`, { service: e.o.service }).map((x) => Number(x.labels.le)))]
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    if (les.length > 0 && les.join(",") !== want.join(","))
      out.push(`${name} buckets are ${les.join(", ")}, the contract's ${want.join(", ")}`);
  }
  return out;
}

/** The `dedup-handler-info` clause. */
export function judgeInfo(e: Evidence): Verdict {
  const i = info(e);
  if (!i)
    return broken(
      `no ${HANDLER_INFO_METRIC}{service="${e.o.service}",handler="${e.o.handler}"}: the consumer does not describe its handler`,
    );
  const L = HANDLER_INFO_LABEL;
  const required: string[] = [
    L.service,
    L.handler,
    L.topic,
    L.group,
    L.prefix,
    L.ttlMs,
    L.marking,
    L.failureMode,
    L.stack,
    L.runtime,
    L.contract,
  ];
  if (i.labels[L.marking] === INFO_MARKING.lease) required.push(L.leaseMs);
  const problems = required.filter((l) => !i.labels[l]).map((l) => `label ${l} missing`);
  if (i.value !== 1) problems.push(`value ${i.value}, not 1`);
  if (i.labels[L.prefix] && i.labels[L.prefix] !== dedupKeyPrefix(e.o.service, e.o.handler))
    problems.push(`prefix "${i.labels[L.prefix]}", keys are written under "${e.prefix}"`);
  if (i.labels[L.topic] && i.labels[L.topic] !== e.o.topic)
    problems.push(`topic "${i.labels[L.topic]}", it consumes "${e.o.topic}"`);
  for (const l of [L.ttlMs, L.leaseMs, L.timeoutMs])
    if (i.labels[l] && !/^\d+$/.test(i.labels[l]!)) problems.push(`${l}="${i.labels[l]}" is not a whole number of ms`);
  const desc = `runtime=${i.labels[L.runtime]}, marking=${i.labels[L.marking]}, ttl_ms=${i.labels[L.ttlMs]}, group=${i.labels[L.group]}, contract=${i.labels[L.contract]}`;
  return problems.length ? broken(problems.join("; ")) : held(desc);
}

/** The `hot-uuids` clause. */
export function judgeHot(e: Evidence): Verdict {
  const s = e.scrapes.copies;
  if (s.series(HOT_UUID_METRICS.errorBound, who(e)).length === 0)
    return unknown(
      `${HOT_UUID_METRICS.copies} not exported: hot UUIDs of this handler cannot be merged across processes`,
    );
  const missing = e.fresh.filter((f) => (s.sum(HOT_UUID_METRICS.copies, { ...who(e), uuid: f.uuid }) ?? 0) < 1);
  if (missing.length && s.series(HOT_UUID_METRICS.copies, who(e)).length >= HOT_UUID_TOP_K)
    return unknown(
      `the top ${HOT_UUID_TOP_K} of ${HOT_UUID_METRICS.copies} is full of other UUIDs: run the kit on a quieter handler`,
    );
  return missing.length
    ? broken(
        `${missing.length} of the ${e.fresh.length} UUIDs just swallowed are not in ${HOT_UUID_METRICS.copies} (fewer than its top 10 are listed)`,
      )
    : held(`the ${e.fresh.length} UUIDs swallowed are among ${HOT_UUID_METRICS.copies}`);
}

/** The `processed-counted` clause. */
export function judgeCounts(e: Evidence): Verdict {
  const p = processedDelta(e.scrapes.before, e.scrapes.final, who(e));
  const want = { success: e.fresh.length + 1, error: 2, deduplicated: e.copies.length };
  const ok = p.success === want.success && p.error === want.error && p.deduplicated === want.deduplicated;
  return (ok ? held : broken)(
    `processed_total moved by ${JSON.stringify(p)}, the run expects ${JSON.stringify(want)} (once per delivery: the conflict and the poison record are errors)`,
  );
}
