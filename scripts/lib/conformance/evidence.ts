/**
 * The conformance kit's run: it drives a consumer through the contract's cases over Kafka — fresh
 * UUIDs, copies of them, a copy with another payload, a poison record, then that UUID again with a
 * good payload — and collects what the clauses judge: scrapes between the phases, the keys' values
 * and TTLs, the DLQ records, the Redis commands and the committed offsets.
 */
import { randomUUID } from "node:crypto";
import { PROCESSED_RESULT, METRIC_NAMES } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { dedupKeyPrefix } from "@/names/keys";
import { openDrive, type Command, type DlqRecord, type Drive, type Sent } from "./drive";
import { scrape, type Scrape } from "./exposition";

/** What the kit is pointed at. */
export interface ConformanceOptions {
  metricsUrl: string;
  redisUrl: string;
  brokers: readonly string[];
  topic: string;
  service: string;
  handler: string;
  /** Headers every record carries besides the UUID (a handler that filters on `Event-Type`). @default {} */
  headers?: Record<string, string>;
  /** Longest wait for one phase. @default 20000 */
  phaseMs?: number;
  /** Fresh UUIDs (and as many copies). @default 3 */
  fresh?: number;
  /** Progress lines (a phase's start). @default none */
  log?: (line: string) => void;
}

/** A key's value and remaining TTL when read. */
export interface KeyState {
  value: string | null;
  pttl: number;
}

/** Everything the clauses judge. */
export interface Evidence {
  o: Required<Omit<ConformanceOptions, "log">>;
  prefix: string;
  startedAt: number;
  scrapes: { before: Scrape; fresh: Scrape; copies: Scrape; conflict: Scrape; final: Scrape };
  fresh: Sent[];
  copies: Sent[];
  conflict: Sent;
  poison: Sent;
  retry: Sent;
  /** The fresh keys after their copies were handled. */
  freshKeys: Map<string, KeyState>;
  /** The first fresh UUID's key after the conflicting copy. */
  conflictKey: KeyState;
  /** The poison record's key once its DLQ copy was seen (or the phase timed out). */
  poisonKey: KeyState;
  retryKey: KeyState;
  dlq: readonly DlqRecord[];
  commands: readonly Command[];
  /** The consumer group the offsets were read from and its committed offsets. */
  group: string;
  committed: Map<number, bigint>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `ok` every 100 ms until true or `ms` passed; returns its last answer. */
export async function until(ok: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await ok()) return true;
    if (Date.now() >= end) return false;
    await pause(100);
  }
}

/** Deliveries the handler's `messages_processed_total` counted (every result), 0 when absent. */
function deliveries(s: Scrape, o: { service: string; handler: string }): number {
  return s.sum(METRIC_NAMES.processed, { service: o.service, handler: o.handler }) ?? 0;
}

/** The drive and the helpers every phase uses. */
interface Ctx {
  o: Evidence["o"];
  drive: Drive;
  run: string;
  log: (line: string) => void;
  read(uuid: string): Promise<KeyState>;
  moved(base: number, by: number): Promise<boolean>;
  scrape(): Promise<Scrape>;
}

/** Fresh UUIDs, then their copies: the scrapes after each and the keys after the copies. */
async function freshAndCopies(c: Ctx, before: Scrape) {
  const { o, drive } = c;
  c.log(`fresh: ${o.fresh} new UUIDs`);
  const fresh: Sent[] = [];
  for (let i = 0; i < o.fresh; i++) fresh.push(await drive.send(randomUUID(), JSON.stringify({ run: c.run, n: i })));
  await until(
    async () =>
      (await Promise.all(fresh.map((f) => c.read(f.uuid)))).every(
        (k) => k.value !== null && !k.value.startsWith("processing:"),
      ),
    o.phaseMs,
  );
  await until(() => c.moved(deliveries(before, o), o.fresh), o.phaseMs);
  const afterFresh = await c.scrape();
  c.log(`copies: the same ${o.fresh} UUIDs and payloads again`);
  const copies: Sent[] = [];
  for (const f of fresh) copies.push(await drive.send(f.uuid, f.payload));
  await until(() => c.moved(deliveries(afterFresh, o), o.fresh), o.phaseMs);
  const afterCopies = await c.scrape();
  const freshKeys = new Map<string, KeyState>();
  for (const f of fresh) freshKeys.set(f.uuid, await c.read(f.uuid));
  return { fresh, copies, afterFresh, afterCopies, freshKeys };
}

/** A copy of `first` with another payload, then a poison record, then its UUID again with a good payload. */
async function conflictPoisonRetry(c: Ctx, first: Sent, afterCopies: Scrape) {
  const { o, drive } = c;
  c.log("conflict: the first UUID with another payload");
  const conflict = await drive.send(first.uuid, JSON.stringify({ run: c.run, n: 0, changed: true }));
  await until(() => c.moved(deliveries(afterCopies, o), 1), o.phaseMs);
  const afterConflict = await c.scrape();
  const conflictKey = await c.read(conflict.uuid);
  c.log("poison: a new UUID whose payload is not JSON");
  const poison = await drive.send(randomUUID(), "{not json");
  await until(() => drive.dlq.some((r) => r.uuid === poison.uuid), o.phaseMs);
  const poisonKey = await c.read(poison.uuid);
  c.log("failure then success: the poisoned UUID again with a good payload");
  const beforeRetry = deliveries(await c.scrape(), o);
  const retry = await drive.send(poison.uuid, JSON.stringify({ run: c.run, n: "retry" }));
  const isDone = async () => (await c.read(poison.uuid)).value?.startsWith("done") === true;
  await until(async () => (await isDone()) || (await c.moved(beforeRetry, 1)), o.phaseMs);
  await until(isDone, 2_000);
  return { conflict, afterConflict, conflictKey, poison, poisonKey, retry, retryKey: await c.read(retry.uuid) };
}

/** The group's committed offsets, once they pass every record sent (or the phase timed out). */
async function committedAfter(c: Ctx, group: string, sent: readonly Sent[]): Promise<Map<number, bigint>> {
  const last = new Map<number, bigint>();
  for (const s of sent) last.set(s.partition, BigInt(s.offset) + 1n);
  let committed = new Map<number, bigint>();
  await until(async () => {
    committed = await c.drive.committed(group);
    return [...last].every(([p, end]) => (committed.get(p) ?? -1n) >= end);
  }, c.o.phaseMs);
  return committed;
}

/**
 * Runs the drive against the consumer and returns the evidence; the keys it created are deleted
 * after. Throws when the metrics cannot be scraped at all.
 */
export async function collectEvidence(opts: ConformanceOptions): Promise<Evidence> {
  const o = { headers: {}, phaseMs: 20_000, fresh: 3, ...opts };
  const prefix = dedupKeyPrefix(o.service, o.handler);
  const startedAt = Date.now();
  const before = await scrape(o.metricsUrl);
  const drive = await openDrive({
    brokers: o.brokers,
    redisUrl: o.redisUrl,
    topic: o.topic,
    prefix,
    headers: o.headers,
  });
  const read = async (uuid: string): Promise<KeyState> => {
    const [value, pttl] = await Promise.all([
      drive.redis.get(`${prefix}:${uuid}`),
      drive.redis.pttl(`${prefix}:${uuid}`),
    ]);
    return { value, pttl };
  };
  const c: Ctx = {
    o,
    drive,
    run: `conformance-${randomUUID().slice(0, 8)}`,
    log: opts.log ?? (() => undefined),
    read,
    scrape: () => scrape(o.metricsUrl),
    moved: async (base, by) => deliveries(await scrape(o.metricsUrl), o) >= base + by,
  };
  let sent: Sent[] = [];
  try {
    const a = await freshAndCopies(c, before);
    sent = a.fresh;
    const b = await conflictPoisonRetry(c, a.fresh[0]!, a.afterCopies);
    sent = [...a.fresh, ...a.copies, b.conflict, b.poison, b.retry];
    const group = groupOf(b.afterConflict, o) ?? `${o.service}.${o.handler}`;
    const committed = await committedAfter(c, group, sent);
    const final = await c.scrape();
    const { afterFresh, afterCopies, ...restA } = a;
    const { afterConflict, ...restB } = b;
    const scrapes = { before, fresh: afterFresh, copies: afterCopies, conflict: afterConflict, final };
    return {
      o,
      prefix,
      startedAt,
      scrapes,
      ...restA,
      ...restB,
      dlq: [...drive.dlq],
      commands: [...drive.commands],
      group,
      committed,
    };
  } finally {
    const keys = [...new Set(sent.map((s) => `${prefix}:${s.uuid}`))];
    if (keys.length > 0) await drive.redis.del(...keys).catch(() => undefined);
    await drive.close();
  }
}

/** The consumer group `dedup_handler_info` declares for the handler. */
function groupOf(s: Scrape, o: { service: string; handler: string }): string | undefined {
  return s.series(HANDLER_INFO_METRIC, { service: o.service, handler: o.handler })[0]?.labels.group;
}

/** `result` deltas of the handler's `messages_processed_total` between two scrapes. */
export function processedDelta(a: Scrape, b: Scrape, o: { service: string; handler: string }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of Object.values(PROCESSED_RESULT)) {
    const m = { service: o.service, handler: o.handler, result: r };
    out[r] = (b.sum(METRIC_NAMES.processed, m) ?? 0) - (a.sum(METRIC_NAMES.processed, m) ?? 0);
  }
  return out;
}
