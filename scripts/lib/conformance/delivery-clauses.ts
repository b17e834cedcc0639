/** The clauses on each kind of delivery: copies, a conflicting payload, a poison record, the committed offsets. */
import { METRIC_NAMES, POISON_KEYS } from "@/names/dedup";
import { type Evidence, processedDelta } from "./evidence";
import { broken, delta, held, unknown, who, type Verdict } from "./judging";

/** The `duplicate-counted` clause. */
export function judgeDuplicates(e: Evidence): Verdict {
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

/** The `payload-conflict` clause. */
export function judgeConflict(e: Evidence): Verdict {
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

/** The `poison-to-dlq` clause. */
export function judgePoison(e: Evidence): Verdict {
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

/** The `offsets-committed` clause. */
export function judgeCommits(e: Evidence): Verdict {
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
