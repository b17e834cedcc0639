/**
 * Pieces the Kafka fault cases share: scaling of message counts, `npm run dlq:replay` against the
 * suite's broker, a case's own topics / ledger / Redis ({@link KafkaCase}), and the accounting of
 * one handler (published vs pushed vs absorbed vs DLQ) and its report row.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";
import { FAULT_BROKERS } from "./kafka";
import { ROOT } from "./procs";
import { FaultRedis, type FaultRedisOptions } from "./redis";
import { createTopics, Ledger, report, runId, type DlqEntry } from "./stream";

/**
 * `FAULTS_SCALE` (default 1) multiplies the message counts; the suite prints the counts it
 * ran with. Only for a quick local look: `.ci/run` uses the default.
 */
export const SCALE = Math.max(0.001, Number(process.env.FAULTS_SCALE ?? 1) || 1);

/** `n × SCALE`, at least 100. */
export function scaled(n: number): number {
  return Math.max(100, Math.round(n * SCALE));
}

/**
 * Runs `npm run dlq:replay -- --topic <dlqTopic>` against the suite's broker, with the case's own
 * topic as the one re-drive may publish to (`CONSUMER_TOPICS`, the replay's allow-list); returns its output.
 */
export async function npmDlqReplay(dlqTopic: string, originTopic: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KAFKA_BROKERS: FAULT_BROKERS.join(","),
    CONSUMER_TOPICS: originTopic,
  };
  for (const k of [
    "REDIS_URL",
    "REDIS_CLUSTER_NODES",
    "PROMETHEUS_URL",
    "DATABASE_URL",
    "WORKSHOP_TOKEN",
    "DEMO_TOPIC",
  ])
    delete env[k];
  const { stdout, stderr } = await promisify(execFile)(
    "npm",
    ["run", "--silent", "dlq:replay", "--", "--topic", dlqTopic, "--max", "1000000"],
    {
      cwd: ROOT,
      env,
      timeout: 180_000,
    },
  );
  return `${stdout}${stderr}`.trim();
}

/** One handler's figures against what was published. */
export interface Accounting {
  processed: number;
  duplicateSideEffects: number;
  /** Re-sends the provider absorbed by idempotency key (nothing delivered). */
  absorbed: number;
  /** Published ids neither pushed nor in the DLQ. */
  lost: number;
  /** Published ids not pushed (in the DLQ or lost). */
  unprocessed: number;
  /** DLQ entries of this handler. */
  dlq: number;
  /** Distinct message ids among them (fewer than `dlq` when a message was poisoned twice). */
  dlqIds: number;
  /** A few lost ids, for the failure message. */
  lostSample: string[];
}

/** Compares the ledger of `handler` and its DLQ entries with the published ids. */
export async function account(
  ledger: Ledger,
  handler: string,
  ids: readonly string[],
  dlq: readonly DlqEntry[],
): Promise<Accounting> {
  const l = await ledger.read(handler);
  const inDlq = new Set(dlq.filter((d) => d.handler === handler && d.uuid).map((d) => d.uuid!));
  const uniq = new Set(ids);
  let lost = 0;
  let unprocessed = 0;
  const lostSample: string[] = [];
  for (const id of uniq) {
    if (l.ids.has(id)) continue;
    unprocessed++;
    if (!inDlq.has(id)) {
      lost++;
      if (lostSample.length < 5) lostSample.push(id);
    }
  }
  return {
    processed: [...uniq].filter((id) => l.ids.has(id)).length,
    duplicateSideEffects: l.duplicates,
    absorbed: l.absorbed,
    lost,
    unprocessed,
    dlq: dlq.filter((d) => d.handler === handler).length,
    dlqIds: inDlq.size,
    lostSample,
  };
}

/** Options of {@link KafkaCase}. */
export interface KafkaCaseOptions {
  /** Partitions of the case's topic (its DLQ topic has one). */
  partitions: number;
  /** Handlers whose side effects the ledger records. */
  handlers: readonly string[];
  /** Options of the case's Redis. */
  redis?: FaultRedisOptions;
}

/**
 * What one Kafka fault case owns, named after its `kind` and a fresh run id: the topic
 * `faults.<kind>.<id>` and its `.dlq`, the ledger schema `faults_<kind>_<id>`, a Redis of its own.
 * Call {@link setup} in `beforeAll` and {@link teardown} in `afterAll` after stopping the workers.
 */
export class KafkaCase {
  readonly id = runId();
  readonly topic: string;
  readonly dlqTopic: string;
  readonly ledger: Ledger;
  private started: FaultRedis | undefined;

  constructor(
    private readonly kind: string,
    private readonly o: KafkaCaseOptions,
  ) {
    this.topic = `faults.${kind}.${this.id}`;
    this.dlqTopic = `${this.topic}.dlq`;
    this.ledger = new Ledger(`faults_${kind}_${this.id}`);
  }

  /** The case's Redis (after {@link setup}). */
  get redis(): FaultRedis {
    if (!this.started) throw new Error(`fault case ${this.kind}: setup() has not started its Redis`);
    return this.started;
  }

  /** Starts the Redis, creates the topic and its DLQ topic, creates the ledger tables. */
  async setup(): Promise<void> {
    this.started = await FaultRedis.start(this.kind, this.o.redis);
    await createTopics([
      { name: this.topic, partitions: this.o.partitions },
      { name: this.dlqTopic, partitions: 1 },
    ]);
    await this.ledger.init([...this.o.handlers]);
  }

  /**
   * Registers the case's hooks: {@link setup} in `beforeAll`; in `afterAll`, `beforeTeardown` (stop
   * the case's workers, restore what it broke) and then {@link teardown}.
   */
  hooks(beforeTeardown: () => Promise<unknown>): void {
    beforeAll(() => this.setup());
    afterAll(async () => {
      await beforeTeardown();
      await this.teardown();
    });
  }

  /** Closes the Redis and drops the ledger schema. */
  async teardown(): Promise<void> {
    await this.started?.close();
    await this.ledger.drop();
  }
}

/**
 * Writes a case's result row from one handler's {@link Accounting}: processed, duplicate side
 * effects and absorbed re-sends from it; what counts as lost, the DLQ size and the time as given.
 */
export function reportAccounting(
  name: string,
  published: number,
  a: Accounting,
  row: { lost: number; dlq: number; seconds: number; note: string },
): void {
  report({
    case: name,
    published,
    processed: a.processed,
    lost: row.lost,
    duplicateSideEffects: a.duplicateSideEffects,
    absorbed: a.absorbed,
    dlq: row.dlq,
    seconds: row.seconds,
    note: row.note,
  });
}
