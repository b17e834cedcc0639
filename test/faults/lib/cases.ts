/**
 * Pieces the Kafka fault cases share: scaling of message counts, `npm run dlq:replay` against the
 * suite's broker, and the accounting of one handler (published vs pushed vs absorbed vs DLQ).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { FAULT_BROKERS } from "./kafka";
import { ROOT } from "./procs";
import type { DlqEntry, Ledger } from "./stream";

/**
 * `FAULTS_SCALE` (default 1) multiplies the message counts; the suite prints the counts it
 * ran with. Only for a quick local look: `.ci/run` uses the default.
 */
export const SCALE = Math.max(0.001, Number(process.env.FAULTS_SCALE ?? 1) || 1);

/** `n × SCALE`, at least 100. */
export function scaled(n: number): number {
  return Math.max(100, Math.round(n * SCALE));
}

/** Runs `npm run dlq:replay -- --topic <dlqTopic>` against the suite's broker; returns its output. */
export async function npmDlqReplay(dlqTopic: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, KAFKA_BROKERS: FAULT_BROKERS.join(",") };
  for (const k of ["REDIS_URL", "REDIS_CLUSTER_NODES", "PROMETHEUS_URL", "DATABASE_URL", "WORKSHOP_TOKEN"]) delete env[k];
  const { stdout, stderr } = await promisify(execFile)("npm", ["run", "--silent", "dlq:replay", "--", "--topic", dlqTopic, "--max", "1000000"], {
    cwd: ROOT,
    env,
    timeout: 180_000,
  });
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
export async function account(ledger: Ledger, handler: string, ids: readonly string[], dlq: readonly DlqEntry[]): Promise<Accounting> {
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
  return { processed: [...uniq].filter((id) => l.ids.has(id)).length, duplicateSideEffects: l.duplicates, absorbed: l.absorbed, lost, unprocessed, dlq: dlq.filter((d) => d.handler === handler).length, dlqIds: inDlq.size, lostSample };
}
