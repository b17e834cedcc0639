/**
 * The contract's clauses as the conformance kit judges them, one entry each: its name (what the
 * kit prints), what it says, and how the evidence of a run holds it, breaks it, or cannot tell
 * ("not measured": the consumer does not export the signal the clause needs — never a pass).
 */
import { payloadFingerprint, HANDLER_TIME_BUCKETS, CHECK_DURATION_BUCKETS } from "@/server/dedup";
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  HOT_UUID_METRICS,
  HOT_UUID_TOP_K,
  METRIC_LABELS,
  METRIC_NAMES,
  POISON_KEYS,
  POISON_REASON_CLASSES,
  PROCESSED_RESULTS,
  SLOW_CHECK_SECONDS,
} from "@/names/dedup";
import { HANDLER_INFO_LABEL, HANDLER_INFO_METRIC, INFO_MARKING } from "@/names/contract";
import { TTL_POLICY, dedupKeyPrefix } from "@/names/keys";
import { type Evidence, processedDelta } from "./evidence";
import type { Scrape } from "./exposition";
import type { Sent } from "./drive";

/** How a run judged a clause. */
export type ClauseStatus = "held" | "broken" | "not measured";

/** A clause's verdict and why. */
export interface Verdict {
  status: ClauseStatus;
  detail: string;
}

/** One clause of the contract. */
export interface Clause {
  name: string;
  says: string;
  judge(e: Evidence): Verdict;
}

const held = (detail: string): Verdict => ({ status: "held", detail });
const broken = (detail: string): Verdict => ({ status: "broken", detail });
const unknown = (detail: string): Verdict => ({ status: "not measured", detail });

/** `done:<topic>:<partition>:<offset>` of a record, with `#<fingerprint>` allowed after it. */
function donePattern(e: Evidence, s: Sent): RegExp {
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^done:${esc(e.o.topic)}:${s.partition}:${s.offset}(#[A-Za-z0-9_-]{7})?$`);
}

const who = (e: Evidence) => ({ service: e.o.service, handler: e.o.handler });
const delta = (a: Scrape, b: Scrape, name: string, m: Record<string, string>) =>
  (b.sum(name, m) ?? 0) - (a.sum(name, m) ?? 0);
const info = (e: Evidence) => e.scrapes.final.series(HANDLER_INFO_METRIC, who(e))[0];
const WRITES = new Set(["SET", "SETNX", "SETEX", "PSETEX", "GETSET", "GETDEL", "DEL", "UNLINK"]);

/** The first command that wrote `key`, as MONITOR saw it. */
function firstWrite(e: Evidence, key: string) {
  return e.commands.find((c) => WRITES.has(c.args[0]!) && c.args[1] === key);
}

/** The series each label value must have at 0 before its first event (docs/CONTRACT.md, zero series). */
function zeroSeriesMissing(s: Scrape, e: Evidence): string[] {
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
function metricsProblems(e: Evidence): string[] {
  const s = e.scrapes.final;
  const out: string[] = [];
  const eventOnly = new Set<string>([METRIC_NAMES.lastError, METRIC_NAMES.lastSlowCheck]);
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

function judgeInfo(e: Evidence): Verdict {
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

/** The lease of a `SET … PX <ms>` / `EX <s>` in milliseconds, as text. */
function leaseOf(args: readonly string[]): string {
  const i = args.findIndex((a, j) => j >= 3 && (a.toUpperCase() === "PX" || a.toUpperCase() === "EX"));
  if (i < 0) return "none";
  return args[i]!.toUpperCase() === "PX" ? String(args[i + 1]) : String(Number(args[i + 1]) * 1000);
}

function judgeClaim(e: Evidence): Verdict {
  if (e.commands.length === 0)
    return unknown(
      "MONITOR saw no command on the handler's keys (another Redis than the consumer's, or MONITOR not allowed)",
    );
  const bad: string[] = [];
  for (const f of e.fresh) {
    const w = firstWrite(e, `${e.prefix}:${f.uuid}`);
    if (!w) return unknown(`MONITOR saw no write to ${e.prefix}:${f.uuid}`);
    const [cmd, , value = ""] = w.args;
    const opts = w.args.slice(3).map((a) => a.toUpperCase());
    if (
      cmd !== "SET" ||
      !value.startsWith("processing:") ||
      !opts.includes("NX") ||
      !(opts.includes("PX") || opts.includes("EX"))
    )
      bad.push(w.args.map((a) => JSON.stringify(a)).join(" "));
  }
  if (bad.length)
    return broken(
      `first write to a fresh key was ${bad[0]} — not SET processing:<token> NX PX <lease>: the key is marked before the handler ran, so a failed run loses the message`,
    );
  const lease = info(e)?.labels[HANDLER_INFO_LABEL.leaseMs];
  const pxs = new Set(e.fresh.map((f) => leaseOf(firstWrite(e, `${e.prefix}:${f.uuid}`)!.args)));
  if (lease && [...pxs].some((px) => px !== lease))
    return broken(`claimed for PX ${[...pxs].join(", ")} ms, but dedup_handler_info declares lease_ms ${lease}`);
  return held(
    `each fresh key was first claimed with SET processing:<token> NX PX ${[...pxs].join(", ")} (${e.fresh.length} keys)`,
  );
}

function judgeDone(e: Evidence): Verdict {
  const bad = e.fresh.filter((f) => !donePattern(e, f).test(e.freshKeys.get(f.uuid)?.value ?? ""));
  if (bad.length === 0)
    return held(
      `done:<topic>:<partition>:<offset> of the first delivery on ${e.fresh.length} keys, copies did not change it`,
    );
  const f = bad[0]!;
  return broken(
    `${e.prefix}:${f.uuid} holds ${JSON.stringify(e.freshKeys.get(f.uuid)?.value)}, expected done:${e.o.topic}:${f.partition}:${f.offset}[#<fingerprint>]`,
  );
}

function judgeTtl(e: Evidence): Verdict {
  const ttl = Number(info(e)?.labels[HANDLER_INFO_LABEL.ttlMs] ?? NaN);
  const elapsed = Date.now() - e.startedAt + 5_000;
  const pttls = e.fresh.map((f) => e.freshKeys.get(f.uuid)?.pttl ?? -2);
  const lo = Number.isFinite(ttl) ? ttl - elapsed : TTL_POLICY.minimumMs;
  const hi = Number.isFinite(ttl) ? ttl : Infinity;
  const bad = pttls.find((p) => p <= 0 || p < lo || p > hi);
  const against = Number.isFinite(ttl)
    ? `the declared ttl_ms ${ttl}`
    : `the contract's minimum ${TTL_POLICY.minimumMs} ms (no ttl_ms declared)`;
  return bad === undefined
    ? held(`done keys expire in ${Math.min(...pttls)}–${Math.max(...pttls)} ms, within ${against}`)
    : broken(`a done key's PTTL is ${bad} ms, against ${against}`);
}

function judgeFingerprint(e: Evidence): Verdict {
  const withFp = e.fresh.filter((f) => /#[A-Za-z0-9_-]{7}$/.test(e.freshKeys.get(f.uuid)?.value ?? ""));
  if (withFp.length === 0)
    return unknown(
      "the done values carry no #<fingerprint>: a reused UUID with another payload cannot be told from a repeat",
    );
  const bad = withFp.find((f) => !e.freshKeys.get(f.uuid)!.value!.endsWith(`#${payloadFingerprint(f.payload)}`));
  return bad
    ? broken(
        `${e.freshKeys.get(bad.uuid)!.value} does not end in #${payloadFingerprint(bad.payload)} (SHA-256, base64url, first 7 characters)`,
      )
    : held(`#<fingerprint> follows the algorithm on ${withFp.length} keys`);
}

function judgeDuplicates(e: Evidence): Verdict {
  const { fresh: a, copies: b } = e.scrapes;
  const n = e.copies.length;
  const d = delta(a, b, METRIC_NAMES.deduplicated, who(e));
  const p = processedDelta(a, b, who(e));
  const problems: string[] = [];
  if (d !== n) problems.push(`${METRIC_NAMES.deduplicated} moved by ${d}`);
  if (p.deduplicated !== n) problems.push(`processed{result="deduplicated"} moved by ${p.deduplicated}`);
  if (p.success !== 0) problems.push(`processed{result="success"} moved by ${p.success}: the handler ran again`);
  if (b.series(METRIC_NAMES.duplicatesByCause, who(e)).length > 0) {
    const r = delta(a, b, METRIC_NAMES.duplicatesByCause, { ...who(e), cause: "republish" });
    if (r !== n) problems.push(`by_cause{cause="republish"} moved by ${r} (copies published at new offsets)`);
  }
  return problems.length
    ? broken(`${n} copies: ${problems.join("; ")}`)
    : held(`${n} copies swallowed and counted once each, the handler did not run again`);
}

function judgeHot(e: Evidence): Verdict {
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

function judgeConflict(e: Evidence): Verdict {
  const { copies: a, conflict: b } = e.scrapes;
  const m = { service: e.o.service, handler: e.o.handler };
  if (b.series(METRIC_NAMES.payloadConflicts, m).length === 0) {
    return unknown(
      `${METRIC_NAMES.payloadConflicts} not exported: the copy with another payload was counted as ${JSON.stringify(processedDelta(a, b, who(e)))}`,
    );
  }
  const c = delta(a, b, METRIC_NAMES.payloadConflicts, m);
  const kept = e.conflictKey.value === e.freshKeys.get(e.conflict.uuid)?.value;
  if (c === 1 && kept)
    return held(
      "the copy with another payload was counted as a conflict, the key kept the first payload's fingerprint",
    );
  return broken(
    `${METRIC_NAMES.payloadConflicts} moved by ${c}; the key now holds ${JSON.stringify(e.conflictKey.value)}`,
  );
}

function judgePoison(e: Evidence): Verdict {
  const r = e.dlq.find((x) => x.uuid === e.poison.uuid);
  const dlq = `${e.o.topic}.dlq`;
  if (!r) return broken(`no record with UUID ${e.poison.uuid} reached ${dlq} within ${e.o.phaseMs} ms`);
  const problems = POISON_KEYS.filter((k) => !r.headers[k]).map((k) => `header ${k} missing`);
  if (r.headers.topic_poisoned && r.headers.topic_poisoned !== e.o.topic)
    problems.push(`topic_poisoned="${r.headers.topic_poisoned}"`);
  if (r.headers.handler_poisoned && r.headers.handler_poisoned !== e.o.handler)
    problems.push(`handler_poisoned="${r.headers.handler_poisoned}"`);
  if (!r.payload.equals(e.poison.payload)) problems.push("payload differs from the record's");
  const p = delta(e.scrapes.conflict, e.scrapes.final, METRIC_NAMES.poisoned, who(e));
  if (e.scrapes.final.series(METRIC_NAMES.poisoned, who(e)).length > 0 && p < 1)
    problems.push(`${METRIC_NAMES.poisoned} did not move`);
  return problems.length
    ? broken(problems.join("; "))
    : held(`${dlq} has it with ${POISON_KEYS.join(", ")} (reason: ${r.headers.reason_poisoned})`);
}

function judgeRelease(e: Evidence): Verdict {
  const v = e.poisonKey.value;
  if (v === null) return held("the failed record's key was deleted: a redelivery or a re-publish runs the handler");
  const cost = v.startsWith("processing:")
    ? "every copy of this message waits as in progress until the lease expires"
    : "a retry of this message is swallowed and the message is lost";
  return broken(`after the handler failed, ${e.prefix}:${e.poison.uuid} still holds ${JSON.stringify(v)}: ${cost}`);
}

function judgeRetry(e: Evidence): Verdict {
  const v = e.retryKey.value ?? "";
  return donePattern(e, e.retry).test(v)
    ? held(`the UUID sent again after its failure ran and was marked ${v}`)
    : broken(
        `the UUID sent again after its failure was not processed: its key holds ${JSON.stringify(e.retryKey.value)}`,
      );
}

function judgeCounts(e: Evidence): Verdict {
  const p = processedDelta(e.scrapes.before, e.scrapes.final, who(e));
  const want = { success: e.fresh.length + 1, error: 2, deduplicated: e.copies.length };
  const ok = p.success === want.success && p.error === want.error && p.deduplicated === want.deduplicated;
  return (ok ? held : broken)(
    `processed_total moved by ${JSON.stringify(p)}, the run expects ${JSON.stringify(want)} (once per delivery: the conflict and the poison record are errors)`,
  );
}

function judgeCommits(e: Evidence): Verdict {
  const end = new Map<number, bigint>();
  for (const s of [...e.fresh, ...e.copies, e.conflict, e.poison, e.retry]) {
    const next = BigInt(s.offset) + 1n;
    if (next > (end.get(s.partition) ?? 0n)) end.set(s.partition, next);
  }
  const behind = [...end]
    .filter(([p, next]) => (e.committed.get(p) ?? -1n) < next)
    .map(([p, next]) => `partition ${p}: ${e.committed.get(p) ?? "none"} < ${next}`);
  return behind.length
    ? broken(`group ${e.group} did not commit past the records sent (${behind.join(", ")})`)
    : held(`group ${e.group} committed past every record sent`);
}

/** The clauses, in the order the kit prints them. */
export const CLAUSES: readonly Clause[] = [
  {
    name: "zero-series",
    says: "every label value of the handler's counters exists at 0 before its first event",
    judge: (e) => {
      const m = zeroSeriesMissing(e.scrapes.before, e);
      return m.length
        ? broken(`missing before the run: ${m.join(", ")}`)
        : held("every label value at 0 before the run");
    },
  },
  {
    name: "metrics-names",
    says: "the library's metrics under their exact names and label names",
    judge: (e) => {
      const m = metricsProblems(e);
      return m.length ? broken(m.join("; ")) : held("every metric of the contract with its labels");
    },
  },
  { name: "dedup-handler-info", says: "dedup_handler_info{…} = 1 describes the handler", judge: judgeInfo },
  {
    name: "claim-before-handler",
    says: "a fresh key is claimed with SET processing:<token> NX PX <lease> before the handler runs",
    judge: judgeClaim,
  },
  {
    name: "done-with-position",
    says: "after success the key holds done:<topic>:<partition>:<offset> of the first delivery",
    judge: judgeDone,
  },
  { name: "done-ttl", says: "a done key lives for the declared TTL (at least 10 min)", judge: judgeTtl },
  {
    name: "payload-fingerprint",
    says: "#<fingerprint> is the first 7 base64url characters of the payload's SHA-256",
    judge: judgeFingerprint,
  },
  {
    name: "duplicate-counted",
    says: "a copy is swallowed and counted once in deduplicated and processed{deduplicated}",
    judge: judgeDuplicates,
  },
  {
    name: "hot-uuids",
    says: "swallowed copies are counted in the exported top 10 of the handler's UUIDs",
    judge: judgeHot,
  },
  { name: "payload-conflict", says: "a copy with another payload is a conflict, not a repeat", judge: judgeConflict },
  {
    name: "poison-to-dlq",
    says: "a record that fails for good goes to <topic>.dlq with the poison headers",
    judge: judgePoison,
  },
  { name: "release-on-failure", says: "a failed handler's claim is deleted (compare-and-delete)", judge: judgeRelease },
  { name: "failure-then-success", says: "the UUID of a failed record runs when it comes again", judge: judgeRetry },
  {
    name: "processed-counted",
    says: "messages_processed_total moves once per delivery by its result",
    judge: judgeCounts,
  },
  { name: "offsets-committed", says: "offsets are committed after processing", judge: judgeCommits },
];
