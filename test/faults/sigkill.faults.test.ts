/**
 * The consumer process SIGKILLed 10 times at random points during a
 * 100,000-message stream with 5% injected duplicates (re-publications with the same UUID), plus 10
 * replica joins and leaves (a second worker process joins the group, then stops gracefully):
 * 0 lost, 0 duplicate side effects. A killed worker leaves without committing and with its leases
 * held: its successor re-reads the uncommitted tail, the Deduplicator swallows what was done, waits
 * out the leases of what was in flight, and the handler's own idempotency (spec §5) catches the
 * rest — except a kill between a push and its record's COMMIT, whose redelivery calls the push
 * provider again: the event id as the provider's idempotency key absorbs that re-send (see
 * side-effects.faults.test.ts). Absorbed re-sends are bounded by the kills' in-flight window (at
 * most one per concurrently consumed partition per kill); more would mean repeats got past the
 * Deduplicator and the handler's table, i.e. a dedup regression the key merely hides.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_KAFKA_SUBSCRIBER_OPTIONS } from "@/server/transport/kafka-subscriber";
import { account, KafkaCase, reportAccounting, SCALE, scaled } from "./lib/cases";
import { killStorm } from "./lib/kill-storm";
import { sleep, stopAll } from "./lib/procs";
import { publishStream, readDlq, startWorker, waitUntil, WORKER_DEFAULTS, type Worker } from "./lib/stream";

const N = scaled(Number(process.env.FAULTS_SIGKILL_MESSAGES ?? 100_000));
const KILLS = 10;
const HANDLER = "on-review-created";

describe(`case 2: ${KILLS} SIGKILLs and ${KILLS} replica joins/leaves during a ${N}-message stream with 5% duplicates`, () => {
  const fault = new KafkaCase("kill", { partitions: 6, handlers: [HANDLER] });
  const { id, topic, dlqTopic, ledger } = fault;
  const workers: Worker[] = [];

  fault.hooks(() => stopAll(workers));

  it("loses nothing and pushes nothing twice", async () => {
    const t0 = Date.now();
    const worker = (replica: string) => {
      // A killed member holds its partitions for the session timeout and its in-flight keys for the
      // lease: both at their low end so that 10 kills fit the suite's time budget.
      const w = startWorker({
        ...WORKER_DEFAULTS,
        sessionTimeoutMs: 6000,
        leaseMs: 5000,
        replica,
        redisUrl: fault.redis.url,
        schema: ledger.schema,
        topic,
        dlqTopic,
        handlers: [{ name: HANDLER, mode: "open", groupId: `faults.${id}` }],
      });
      workers.push(w);
      return w;
    };
    const main = worker("main-0");
    await main.ready;
    const publishing = publishStream(topic, N, { dupRate: 0.05 });
    publishing.catch(() => undefined);

    const { log } = await killStorm({
      kills: KILLS,
      total: N,
      progress: () => ledger.count(HANDLER),
      unit: "pushed",
      main,
      start: worker,
    });
    const published = await publishing;
    const unique = new Set(published.ids).size;
    console.log(`[faults] case 2: ${log.join("; ")}`);

    expect(await waitUntil(async () => (await ledger.count(HANDLER)) >= unique, 400_000, 1000)).toBe(true);
    await sleep(3000); // late pushes of a duplicate would land now
    const dlq = await readDlq(dlqTopic);
    const a = await account(ledger, HANDLER, published.ids, dlq);
    reportAccounting("2 sigkill x10 + joins/leaves x10", unique, a, {
      lost: a.unprocessed,
      dlq: dlq.length,
      seconds: (Date.now() - t0) / 1000,
      note: `${published.records} records incl. ${published.duplicates} injected duplicates; ${KILLS} SIGKILLs, ${KILLS} joins/leaves${SCALE !== 1 ? `; FAULTS_SCALE=${SCALE}` : ""}`,
    });
    expect(a.unprocessed, `unprocessed: ${a.lostSample.join(", ")}`).toBe(0);
    expect(
      a.duplicateSideEffects,
      "duplicate pushes delivered (the provider's idempotency key should absorb every re-send)",
    ).toBe(0);
    // The key absorbs only the kills' in-flight window (test/faults/side-effects.faults.test.ts): a
    // kill between a push and its record's COMMIT re-sends that push on redelivery, at most one per
    // concurrently consumed partition of the killed worker.
    expect(
      a.absorbed,
      "more re-sends than the kills' in-flight window explains: repeats got past the Deduplicator and the handler's table",
    ).toBeLessThanOrEqual(KILLS * DEFAULT_KAFKA_SUBSCRIBER_OPTIONS.partitionsConsumedConcurrently);
    expect(dlq).toEqual([]);
  });
});
