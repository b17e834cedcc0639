/**
 * The DLQ backlog: what waits in each DLQ topic for a re-drive, read from the topic itself (its
 * offsets and records), not from a 5-minute rate — records poisoned an hour ago still count. The
 * total comes from the partitions' offsets (exact: high − low); the split by the handler and reason
 * class that poisoned each record from one bounded newest-first scan (`RECORD_SCAN_LIMITS`:
 * `complete: false` when it stopped early, the split is then a lower bound). One build for every
 * viewer and scrape, kept {@link DLQ_BACKLOG_TTL_MS}.
 */
import type { IHeaders } from "kafkajs";
import type { OverviewHandler } from "@/lib/api/overview";
import type { Registry } from "prom-client";
import { HANDLER_POISONED_KEY, TOPIC_POISONED_KEY, dlqTopicOf } from "@/names/dedup";
import { config } from "@/server/config";
import { decodeRecord } from "@/server/transport/watermill-codec";
import { registerObserveGauge } from "../observe-gauge";
import { reasonClassOf } from "./dlq";
import { isTopicMissing } from "./log-reader";
import { recordReader } from "./records";
import { RECORD_SCAN_LIMITS, scanNewestFirst } from "./scan";

/** How long one backlog read is served before the next read of the DLQ topics. */
export const DLQ_BACKLOG_TTL_MS = 30_000;

/** The records of one (consumer topic, handler, reason class) in a DLQ topic. */
export interface DlqBacklogGroup {
  /** The consumer topic the records were poisoned on (`topic_poisoned`). */
  topic: string;
  handler: string;
  reasonClass: string;
  count: number;
  /** Newest record's time (ms). */
  newestAt: number;
}

/** One DLQ topic's backlog. */
export interface DlqTopicBacklog {
  dlqTopic: string;
  /** Records in the topic's retention (Σ high − low over partitions). */
  total: number;
  groups: DlqBacklogGroup[];
  /** The scan read every record (else `groups` is a lower bound of the newest ones). */
  complete: boolean;
}

/** Every DLQ topic's backlog, or why it could not be read. */
export interface DlqBacklog {
  readAt: number;
  topics: DlqTopicBacklog[];
  error: string | null;
}

/** Reads one DLQ topic's backlog (bounded). */
export async function readDlqBacklog(dlqTopic: string): Promise<DlqTopicBacklog> {
  const reader = recordReader();
  const ranges = await reader.ranges(dlqTopic);
  const total = ranges.reduce((n, r) => n + Number(r.high - r.low), 0);
  const groups = new Map<string, DlqBacklogGroup>();
  const r = await scanNewestFirst(reader, dlqTopic, null, RECORD_SCAN_LIMITS, (rec) => {
    const m = decodeRecord(rec.headers as IHeaders, rec.value).metadata;
    const g = { topic: m[TOPIC_POISONED_KEY] ?? "", handler: m[HANDLER_POISONED_KEY] ?? "", reasonClass: reasonClassOf(m) };
    const k = `${g.topic}\u0000${g.handler}\u0000${g.reasonClass}`;
    const e = groups.get(k);
    if (e) {
      e.count++;
      e.newestAt = Math.max(e.newestAt, rec.timestamp);
    } else groups.set(k, { ...g, count: 1, newestAt: rec.timestamp });
  });
  return { dlqTopic, total, groups: [...groups.values()], complete: r.complete };
}

type G = typeof globalThis & { __dedupHealthDlqBacklog?: { value: DlqBacklog | null; building: Promise<DlqBacklog> | null } };

function cache() {
  const g = globalThis as G;
  return (g.__dedupHealthDlqBacklog ??= { value: null, building: null });
}

async function build(): Promise<DlqBacklog> {
  const readAt = Date.now();
  try {
    // A DLQ topic nobody has written to yet may not exist: nothing waits in it.
    const read = (t: string) => readDlqBacklog(t).catch((e: unknown) => {
      if (isTopicMissing(e)) return { dlqTopic: t, total: 0, groups: [], complete: true };
      throw e;
    });
    const topics = await Promise.all(config().CONSUMER_TOPICS.map((t) => read(dlqTopicOf(t))));
    return { readAt, topics, error: null };
  } catch (e) {
    return { readAt, topics: [], error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The last backlog read, starting a new read when it is older than {@link DLQ_BACKLOG_TTL_MS}
 * (stale-while-revalidate). The very first call waits up to `firstWaitMs` for the first read; `null`
 * when none finished in time.
 */
export async function dlqBacklog(firstWaitMs = 1000): Promise<DlqBacklog | null> {
  const c = cache();
  if (!c.building && (!c.value || Date.now() - c.value.readAt > DLQ_BACKLOG_TTL_MS)) {
    c.building = build().then((v) => {
      c.value = v;
      c.building = null;
      return v;
    });
  }
  if (c.value || !c.building) return c.value;
  return Promise.race([c.building, new Promise<null>((r) => setTimeout(() => r(null), firstWaitMs).unref())]);
}

/** The DLQ records `handler` poisoned on one of `topics` (any topic when none is known). */
export function handlerBacklog(b: DlqBacklog | null, handler: string, topics: ReadonlySet<string>): OverviewHandler["dlqBacklog"] {
  if (!b) return { status: "unavailable", detail: "kafka: the DLQ backlog is still being read" };
  if (b.error) return { status: "unavailable", detail: `kafka: ${b.error}` };
  const byReason: Record<string, number> = {};
  let total = 0;
  let newest = 0;
  let complete = true;
  let dlqTopic: string | null = null;
  for (const t of b.topics) {
    for (const g of t.groups) {
      if (g.handler !== handler || (topics.size > 0 && !topics.has(g.topic))) continue;
      byReason[g.reasonClass] = (byReason[g.reasonClass] ?? 0) + g.count;
      total += g.count;
      newest = Math.max(newest, g.newestAt);
      dlqTopic ??= t.dlqTopic;
      complete &&= t.complete;
    }
  }
  return { status: "ok", total, byReason, newestAt: newest ? new Date(newest).toISOString() : null, complete, dlqTopic };
}

/**
 * Registers `dedup_dlq_backlog_records{topic,handler,reason_poisoned}` on `registry` (get-or-create):
 * each scrape reports the last backlog read and starts the next when it is due (never waits for it).
 */
export function registerDlqBacklogGauge(registry: Registry): void {
  registerObserveGauge(
    registry,
    "dlqBacklog",
    "Records in the DLQ topic's retention by the consumer topic, handler and reason class that poisoned them: what waits for a re-drive (read from the DLQ topic, refreshed every 30 s)",
    async () => {
      const b = await dlqBacklog(0);
      if (!b || b.error) return null;
      return b.topics.flatMap((t) => t.groups.map((g) => ({ labels: { topic: g.topic, handler: g.handler, reason_poisoned: g.reasonClass }, value: g.count })));
    },
  );
}

/** Forgets the cached backlog (tests). */
export function clearDlqBacklog(): void {
  delete (globalThis as G).__dedupHealthDlqBacklog;
}
