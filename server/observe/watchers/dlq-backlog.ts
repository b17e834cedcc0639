/**
 * The DLQ backlog: the OPEN records of each DLQ topic — neither re-driven nor discarded
 * (../records/dlq-state) — read from the topic itself (its offsets and records), not from a 5-minute rate:
 * records poisoned an hour ago still count. The total comes from the partitions' offsets (exact:
 * high − low, minus the resolved positions at or above low); the split by the handler and reason
 * class that poisoned each record from one bounded newest-first scan (`RECORD_SCAN_LIMITS`:
 * `complete: false` when it stopped early, the split is then a lower bound); the oldest open record
 * from each partition's start. One build for every viewer and scrape, kept
 * {@link DLQ_BACKLOG_TTL_MS}, and rebuilt at the next read after this process resolved records.
 */
import type { OverviewHandler } from "@/lib/api/overview";
import type { Registry } from "prom-client";
import { dlqTopicOf } from "@/names/dlq";
import { config } from "@/server/config";
import { readDlqConvention } from "@/server/transport/dlq-conventions";
import { declaredHandlers } from "../core/handler-registry";
import { registerObserveGauge } from "../core/observe-gauge";
import { dlqStateStore, lastResolvedAt, positionKey, type DlqResolution } from "../records/dlq-state";
import type { LogReader, PartitionRange } from "../records/log-reader";
import { isTopicMissing } from "../records/log-reader";
import { recordReader } from "../records/records";
import { RECORD_SCAN_LIMITS, scanNewestFirst } from "../records/scan";

/** How long one backlog read is served before the next read of the DLQ topics. */
export const DLQ_BACKLOG_TTL_MS = 30_000;
/** How long a read waits for the rebuild after this process resolved records (else it serves the last read). */
export const DLQ_BACKLOG_RESOLVED_WAIT_MS = 5000;

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
  /** Open records in the topic's retention (Σ high − low over partitions, minus those re-driven or discarded). */
  total: number;
  /** Time (ms) of the oldest open record; `null` when none is open. */
  oldestOpenAt: number | null;
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

/**
 * The time of the oldest open record of one partition: its first record from the log start that is
 * not resolved (bounded by `RECORD_SCAN_LIMITS.records` resolved records skipped); `null` when none.
 */
async function oldestOpen(
  reader: LogReader,
  dlqTopic: string,
  range: PartitionRange,
  resolved: ReadonlyMap<string, DlqResolution>,
): Promise<number | null> {
  let at = range.low;
  let skipped = 0;
  while (at < range.high && skipped < RECORD_SCAN_LIMITS.records) {
    const got = await reader.fetchFrom(dlqTopic, range.partition, at, 256 * 1024);
    if (got.length === 0) return null;
    for (const rec of got) {
      if (rec.offset >= range.high) return null;
      if (!resolved.has(positionKey(rec))) return rec.timestamp;
      skipped++;
    }
    at = got.at(-1)!.offset + 1n;
  }
  return null;
}

/** Reads one DLQ topic's backlog of open records (bounded). */
export async function readDlqBacklog(dlqTopic: string): Promise<DlqTopicBacklog> {
  const reader = recordReader();
  const ranges = await reader.ranges(dlqTopic);
  const resolved = await dlqStateStore().resolved(dlqTopic, new Map(ranges.map((r) => [r.partition, r.low] as const)));
  // Resolutions are kept at or above low only: every one is a record still in the log.
  const total = ranges.reduce((n, r) => n + Number(r.high - r.low), 0) - resolved.size;
  const oldest = (await Promise.all(ranges.map((r) => oldestOpen(reader, dlqTopic, r, resolved)))).filter(
    (t): t is number => t !== null,
  );
  const groups = new Map<string, DlqBacklogGroup>();
  const r = await scanNewestFirst(reader, dlqTopic, null, RECORD_SCAN_LIMITS, (rec) => {
    if (resolved.has(positionKey(rec))) return;
    // Watermill's poison metadata, Spring's kafka_dlt-* or Connect's __connect.errors.*: the same reading as the DLQ page.
    const o = readDlqConvention(rec.headers);
    const g = { topic: o.topic ?? "", handler: o.handler, reasonClass: o.reasonClass };
    const k = `${g.topic}\u0000${g.handler}\u0000${g.reasonClass}`;
    const e = groups.get(k);
    if (e) {
      e.count++;
      e.newestAt = Math.max(e.newestAt, rec.timestamp);
    } else groups.set(k, { ...g, count: 1, newestAt: rec.timestamp });
  });
  return {
    dlqTopic,
    total,
    oldestOpenAt: oldest.length ? Math.min(...oldest) : null,
    groups: [...groups.values()],
    complete: r.complete,
  };
}

type G = typeof globalThis & {
  __dedupHealthDlqBacklog?: { value: DlqBacklog | null; building: Promise<DlqBacklog> | null; buildStartedAt: number };
};

function cache() {
  const g = globalThis as G;
  return (g.__dedupHealthDlqBacklog ??= { value: null, building: null, buildStartedAt: 0 });
}

async function build(): Promise<DlqBacklog> {
  const readAt = Date.now();
  try {
    // A DLQ topic nobody has written to yet may not exist: nothing waits in it.
    const read = (t: string) =>
      readDlqBacklog(t).catch((e: unknown) => {
        if (isTopicMissing(e)) return { dlqTopic: t, total: 0, oldestOpenAt: null, groups: [], complete: true };
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
 * when none finished in time. **After this process re-drove or discarded records**, the read made
 * before is out of date: the call waits up to {@link DLQ_BACKLOG_RESOLVED_WAIT_MS} for a new one, so
 * the next scrape already counts them out (another process's writes, the CLI's, show within the TTL).
 */
export async function dlqBacklog(firstWaitMs = 1000): Promise<DlqBacklog | null> {
  const c = cache();
  const outdated = (c.value?.readAt ?? Infinity) <= lastResolvedAt();
  if (
    (!c.building || (outdated && c.buildStartedAt <= lastResolvedAt())) &&
    (!c.value || outdated || Date.now() - c.value.readAt > DLQ_BACKLOG_TTL_MS)
  ) {
    c.buildStartedAt = Date.now();
    const building = build().then((v) => {
      if (!c.value || v.readAt >= c.value.readAt) c.value = v;
      if (c.building === building) c.building = null;
      return v;
    });
    c.building = building;
  }
  if (c.value && !outdated) return c.value;
  if (!c.building) return c.value;
  const wait = outdated ? DLQ_BACKLOG_RESOLVED_WAIT_MS : firstWaitMs;
  return Promise.race([c.building, new Promise<DlqBacklog | null>((r) => setTimeout(() => r(c.value), wait).unref())]);
}

/** The DLQ records `handler` poisoned on one of `topics` (any topic when none is known). */
export function handlerBacklog(
  b: DlqBacklog | null,
  handler: string,
  topics: ReadonlySet<string>,
): OverviewHandler["dlqBacklog"] {
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
  return {
    status: "ok",
    total,
    byReason,
    newestAt: newest ? new Date(newest).toISOString() : null,
    complete,
    dlqTopic,
  };
}

/** Most distinct handler values the backlog gauge reports per topic beyond the declared ones. */
export const BACKLOG_OTHER_HANDLERS_MAX = 20;
/** Longest label value the backlog gauge reports (longer ones are cut, with "…"). */
export const BACKLOG_LABEL_MAX_CHARS = 64;
/** The label value of everything outside the bounds. */
export const OTHER_LABEL = "(other)";

const cut = (v: string) => (v.length > BACKLOG_LABEL_MAX_CHARS ? `${v.slice(0, BACKLOG_LABEL_MAX_CHARS - 1)}…` : v);

/**
 * The backlog gauge's series, bounded whatever the DLQ headers say (they are written by any
 * producer): a topic outside `consumerTopics` is `(other)`; a handler is kept when it is declared,
 * or among the {@link BACKLOG_OTHER_HANDLERS_MAX} with most records of its topic, else `(other)`;
 * values cut at {@link BACKLOG_LABEL_MAX_CHARS}. Counts of merged groups are summed: the total holds.
 */
export function boundedBacklogSeries(
  b: DlqBacklog,
  consumerTopics: readonly string[],
  declared: ReadonlySet<string>,
): Array<{ labels: Record<string, string>; value: number }> {
  const topics = new Set(consumerTopics);
  const series = new Map<string, { labels: Record<string, string>; value: number }>();
  for (const t of b.topics) {
    const perHandler = new Map<string, number>();
    for (const g of t.groups) perHandler.set(g.handler, (perHandler.get(g.handler) ?? 0) + g.count);
    const kept = new Set(
      [...perHandler]
        .filter(([h]) => !declared.has(h))
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
        .slice(0, BACKLOG_OTHER_HANDLERS_MAX)
        .map(([h]) => h),
    );
    for (const g of t.groups) {
      const labels = {
        topic: topics.has(g.topic) ? g.topic : OTHER_LABEL,
        handler: declared.has(g.handler) || kept.has(g.handler) ? cut(g.handler) : OTHER_LABEL,
        reason_poisoned: cut(g.reasonClass),
      };
      const k = `${labels.topic}\u0000${labels.handler}\u0000${labels.reason_poisoned}`;
      const e = series.get(k);
      if (e) e.value += g.count;
      else series.set(k, { labels, value: g.count });
    }
  }
  return [...series.values()];
}

/**
 * Registers `dedup_dlq_backlog_records{topic,handler,reason_poisoned}` (open records; its labels
 * bounded by {@link boundedBacklogSeries}) and
 * `dedup_dlq_oldest_open_age_seconds{topic}` on `registry` (get-or-create): each scrape reports the
 * last backlog read and starts the next when it is due (waits for it only after this process
 * resolved records). The age is taken at the scrape, so it grows between reads.
 */
export function registerDlqBacklogGauge(registry: Registry): void {
  registerObserveGauge(
    registry,
    "dlqBacklog",
    "Open records (neither re-driven nor discarded) in the DLQ topic's retention by the consumer topic, handler and reason class that poisoned them: what waits for a re-drive (read from the DLQ topic, refreshed every 30 s)",
    async () => {
      const b = await dlqBacklog(0);
      if (!b || b.error) return null;
      return boundedBacklogSeries(b, config().CONSUMER_TOPICS, new Set(declaredHandlers().map((h) => h.setup.handler)));
    },
  );
  registerObserveGauge(
    registry,
    "dlqOldestOpenAge",
    "Age in seconds of the oldest open record (neither re-driven nor discarded) in the DLQ of the consumer topic; 0 when none is open",
    async () => {
      const b = await dlqBacklog(0);
      if (!b || b.error) return null;
      const now = Date.now();
      const consumerTopic = (dlq: string) => config().CONSUMER_TOPICS.find((t) => dlqTopicOf(t) === dlq) ?? dlq;
      return b.topics.map((t) => ({
        labels: { topic: consumerTopic(t.dlqTopic) },
        value: t.oldestOpenAt === null ? 0 : Math.max(0, (now - t.oldestOpenAt) / 1000),
      }));
    },
  );
}

/** Forgets the cached backlog (tests). */
export function clearDlqBacklog(): void {
  delete (globalThis as G).__dedupHealthDlqBacklog;
}
