/**
 * The fault cases' message stream and ground truth: what was published (ULIDs kept in memory), what
 * reached the outside world (the push ledger of `PostgresSideEffectStore` in this run's own schema),
 * what went to the DLQ, and the consumer workers.
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Pool } from "pg";
import { ulid } from "ulid";
import type { Message } from "@/server/dedup";
import { CORRELATION_ID_KEY, EVENT_TYPE_KEY, HANDLER_POISONED_KEY, REASON_POISONED_KEY } from "@/names/dedup";
import { KafkaPublisher } from "@/server/transport/kafka-publisher";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { KafkaTransport } from "@/server/transport";
import type { WorkerConfig } from "../worker";
import { FAULT_BROKERS } from "./kafka";
import { ROOT, sleep, startProc, type Proc } from "./procs";

/** PostgreSQL shared by the suite (trust auth); every run uses its own schema. */
export const DATABASE_URL = process.env.FAULTS_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A short random id for names of this run (schema, topics, groups). */
export function runId(): string {
  return randomBytes(4).toString("hex");
}

/** Table prefix the worker's side-effect store uses. */
const TABLE_PREFIX = "f";

/** The provider ledger's figures of one handler (see {@link Ledger.read}). */
export interface LedgerFigures {
  /** Distinct event ids delivered at least once. */
  ids: Set<string>;
  /** Deliveries. */
  pushes: number;
  /** Deliveries beyond the first per event id: duplicate side effects. */
  duplicates: number;
  /** Calls to the provider. */
  attempts: number;
  /** Calls the provider absorbed by idempotency key (delivered nothing). */
  absorbed: number;
}

/** This run's side-effect schema: created (tables too) before the workers start, dropped at the end. */
export class Ledger {
  private readonly pool: Pool;
  constructor(readonly schema: string) {
    this.pool = new Pool({ connectionString: DATABASE_URL, max: 2 });
    this.pool.on("error", () => undefined);
  }

  /** Creates the schema and the handlers' tables (the store creates them lazily; concurrent workers would race). */
  async init(handlers: readonly string[]): Promise<void> {
    const store = new PostgresSideEffectStore({
      connectionString: DATABASE_URL,
      schema: this.schema,
      tablePrefix: TABLE_PREFIX,
      poolSize: 1,
    });
    try {
      for (const h of handlers) {
        // A send that fails after the row insert: creates the tables and leaves no row behind.
        await store
          .sendOnce(h, "__init__", async () => {
            throw new Error("init");
          })
          .catch(() => undefined);
      }
    } finally {
      await store.close();
    }
  }

  /**
   * What the provider did for `handler`: distinct event ids delivered, deliveries (`pushes`),
   * duplicate side effects (`Σ pushes − 1`), calls (`attempts`) and re-sends absorbed by
   * idempotency key (`Σ attempts − pushes`).
   */
  async read(handler: string): Promise<LedgerFigures> {
    const r = await this.pool.query<{ event_id: string; pushes: number; attempts: number }>(
      `SELECT event_id, pushes, attempts FROM "${this.schema}"."${TABLE_PREFIX}_push_ledger" WHERE handler = $1`,
      [handler],
    );
    const f: LedgerFigures = { ids: new Set<string>(), pushes: 0, duplicates: 0, attempts: 0, absorbed: 0 };
    for (const row of r.rows) {
      if (row.pushes > 0) f.ids.add(row.event_id);
      f.pushes += row.pushes;
      f.duplicates += Math.max(0, row.pushes - 1);
      f.attempts += row.attempts;
      f.absorbed += row.attempts - row.pushes;
    }
    return f;
  }

  /** Number of distinct event ids pushed by `handler`. */
  async count(handler: string): Promise<number> {
    const r = await this.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM "${this.schema}"."${TABLE_PREFIX}_push_ledger" WHERE handler = $1`,
      [handler],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  /** Drops the schema. */
  async drop(): Promise<void> {
    await this.pool.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

/** An event of the stream: a `review.created` with a JSON payload and a fresh ULID. */
export function event(seq: number, uuid = ulid()): Message {
  return {
    uuid,
    metadata: { [EVENT_TYPE_KEY]: "review.created", [CORRELATION_ID_KEY]: ulid() },
    payload: Buffer.from(JSON.stringify({ seq, reviewId: `r${seq}`, at: Date.now() })),
    signal: new AbortController().signal,
    context: {},
  };
}

/** What {@link publishStream} published. */
export interface Published {
  /** Distinct event ids. */
  ids: string[];
  /** Records written (ids + injected duplicates). */
  records: number;
  /** Records that repeated an earlier id. */
  duplicates: number;
}

/**
 * Publishes `n` distinct events to `topic`, plus `dupRate × n` re-publications of earlier events
 * with the same UUID (the forwarder re-publish of spec §1), in batches of 500, at most
 * `ratePerSec` records per second when given.
 */
export async function publishStream(
  topic: string,
  n: number,
  o: { dupRate?: number; ratePerSec?: number; signal?: AbortSignal } = {},
): Promise<Published> {
  const pub = new KafkaPublisher({ brokers: FAULT_BROKERS, clientId: `faults-pub-${runId()}` });
  const ids: string[] = [];
  // A re-publish is the same event again (UUID and payload): another payload under a done UUID is a payload conflict.
  const payloads: Uint8Array[] = [];
  let records = 0;
  let duplicates = 0;
  const dupRate = o.dupRate ?? 0;
  const t0 = Date.now();
  try {
    let seq = 0;
    while (seq < n && !o.signal?.aborted) {
      const batch: Message[] = [];
      for (let i = 0; i < 500 && seq < n; i++) {
        const m = event(seq++);
        ids.push(m.uuid);
        payloads.push(m.payload);
        batch.push(m);
        if (dupRate > 0 && Math.random() < dupRate) {
          const i = Math.floor(Math.random() * ids.length);
          batch.push({
            ...event(seq, ids[i]!),
            payload: payloads[i]!,
            metadata: { [EVENT_TYPE_KEY]: "review.created", "Forwarder-Republish": "1" },
          });
          duplicates++;
        }
      }
      for (let attempt = 1; ; attempt++) {
        try {
          await pub.publish(topic, ...batch);
          break;
        } catch (e) {
          // The broker-restart case publishes through the restart: retry the batch (a retried batch
          // may be written twice: more duplicates, which the consumer must absorb anyway).
          if (attempt >= 60) throw e;
          await sleep(1000);
        }
      }
      records += batch.length;
      if (o.ratePerSec) {
        const ahead = (records / o.ratePerSec) * 1000 - (Date.now() - t0);
        if (ahead > 0) await sleep(ahead);
      }
    }
  } finally {
    await pub.close();
  }
  return { ids, records, duplicates };
}

/** One DLQ entry as the case reports it. */
export interface DlqEntry {
  uuid: string | null;
  handler: string;
  reason: string;
  /** Every metadata header that was readable. */
  metadata: Record<string, string>;
  /** Payload size in bytes. */
  bytes: number;
}

/** Every record of `dlqTopic` on the suite's broker. */
export async function readDlq(dlqTopic: string): Promise<DlqEntry[]> {
  const t = new KafkaTransport(FAULT_BROKERS);
  try {
    const all = await t.readAll(dlqTopic, 200_000);
    return all.map((d) => ({
      uuid: d.ok ? d.uuid : null,
      handler: d.metadata[HANDLER_POISONED_KEY] ?? "",
      reason: d.metadata[REASON_POISONED_KEY] ?? (d.ok ? "" : d.reason),
      metadata: d.metadata,
      bytes: d.payload.length,
    }));
  } finally {
    await t.close();
  }
}

/** Creates topics on the suite's broker. */
export async function createTopics(topics: ReadonlyArray<{ name: string; partitions: number }>): Promise<void> {
  const t = new KafkaTransport(FAULT_BROKERS);
  try {
    await t.createTopics(topics);
  } finally {
    await t.close();
  }
}

/** Defaults of a fault worker (see WorkerConfig). */
export const WORKER_DEFAULTS = {
  brokers: FAULT_BROKERS,
  databaseUrl: DATABASE_URL,
  service: "notification",
  leaseMs: 10_000,
  timeoutMs: 500,
  retry: { maxRetries: 4, initialIntervalMs: 200, maxIntervalMs: 2000, multiplier: 2, randomizationFactor: 0.3 },
  sessionTimeoutMs: 10_000,
  chunkSize: 100,
  metricsPort: 0,
} satisfies Partial<WorkerConfig>;

/** A worker process and a promise of its READY line. */
export interface Worker extends Proc {
  ready: Promise<void>;
  config: WorkerConfig;
}

/** Starts a consumer worker process (test/faults/worker.ts). */
export function startWorker(config: WorkerConfig): Worker {
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const p = startProc(
    `worker-${config.replica}`,
    process.execPath,
    ["--import", "tsx", join(ROOT, "test", "faults", "worker.ts")],
    {
      env: { ...process.env, FAULT_WORKER: JSON.stringify(config), NODE_ENV: "production" },
      onLine: (l) => {
        if (l.startsWith("READY")) onReady();
      },
    },
  );
  const readyOrExit = Promise.race([
    ready,
    p.exited.then((code) => {
      throw new Error(`worker ${config.replica} exited (${code}) before READY:\n${p.logs()}`);
    }),
    sleep(90_000).then(() => {
      throw new Error(`worker ${config.replica} not READY within 90 s:\n${p.logs()}`);
    }),
  ]);
  readyOrExit.catch(() => undefined);
  return Object.assign(p, { ready: readyOrExit, config });
}

/** Polls `fn` until it returns true or `timeoutMs` passed; returns whether it did. */
export async function waitUntil(
  fn: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 500,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
}

/** The per-case figures `npm run test:faults` prints. */
export interface CaseRow {
  case: string;
  published: number;
  processed: number;
  lost: number;
  duplicateSideEffects: number;
  /** Re-sends the provider absorbed by idempotency key (the crash window of spec §5). @default not printed */
  absorbed?: number;
  dlq: number;
  seconds: number;
  note?: string;
}

/** Where the rows go (scripts/test-faults.sh prints them as a table at the end). */
export const RESULTS_FILE = process.env.FAULTS_RESULTS_FILE
  ? resolve(ROOT, process.env.FAULTS_RESULTS_FILE)
  : join(ROOT, "test-results", "faults", "results.jsonl");

/** Prints a row and appends it to {@link RESULTS_FILE}. */
export function report(row: CaseRow): void {
  mkdirSync(dirname(RESULTS_FILE), { recursive: true });
  appendFileSync(RESULTS_FILE, `${JSON.stringify(row)}\n`);
  console.log(
    `[faults] ${row.case}: published=${row.published} processed=${row.processed} lost=${row.lost} duplicate_side_effects=${row.duplicateSideEffects}${row.absorbed !== undefined ? ` absorbed=${row.absorbed}` : ""} dlq=${row.dlq} time=${row.seconds.toFixed(1)}s${row.note ? ` (${row.note})` : ""}`,
  );
}

/** Parses one counter of a Prometheus text exposition, summed over the series matching `labels`. */
export function counterValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const kv of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) got[kv[1]!] = kv[2]!;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[4]);
  }
  return sum;
}
