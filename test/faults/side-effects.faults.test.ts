/**
 * The demo handler's side-effect store under the two faults the Kafka cases hit (found by case 2
 * and by the first throughput runs): a consumer killed between the push and the COMMIT of the
 * record of that push (absorbed by the provider's idempotency key; a naive call without one still
 * pushes twice), and a pool no larger than the number of concurrent deliveries. Direct
 * reproductions, seconds each, so the findings do not need the 100,000-message run.
 */
import { afterAll, describe, expect, it } from "vitest";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { join } from "node:path";
import { ROOT, startProc } from "./lib/procs";
import { DATABASE_URL, Ledger, runId } from "./lib/stream";

describe("side-effect store (PostgreSQL) under a crash and under concurrency", () => {
  const id = runId();
  const ledger = new Ledger(`faults_se_${id}`);
  afterAll(async () => ledger.drop());

  // The window spec §5 leaves (and §11 explains): the handler records its send in the same
  // transaction as the push, so a process killed after the push and before the COMMIT loses the
  // record, and the redelivery calls the provider again. The event id as the provider's idempotency
  // key closes it; without a key the same crash still sends twice. See docs/RELIABILITY.md.
  const crashThenRedeliver = async (handler: string, mode: "keyed" | "naive") => {
    await ledger.init([handler]);
    const eventId = `evt-${id}-${mode}`;
    const child = startProc(`crash-after-push-${id}-${mode}`, process.execPath, [
      "--import",
      "tsx",
      join(ROOT, "test", "faults", "lib", "crash-after-push.ts"),
      DATABASE_URL,
      ledger.schema,
      handler,
      eventId,
      mode,
    ]);
    expect(await child.exited).toBe("SIGKILL");
    expect((await ledger.read(handler)).pushes, "the push went out before the crash").toBe(1);
    // The redelivery (the offset was not committed) runs the same send: the record of the first
    // push was rolled back with the killed transaction, so the handler calls the provider again.
    const store = new PostgresSideEffectStore({
      connectionString: DATABASE_URL,
      schema: ledger.schema,
      tablePrefix: "f",
      poolSize: 2,
    });
    try {
      const sent = await store.sendOnce(handler, eventId, async () => {
        await store.push(handler, eventId, mode === "keyed" ? { idempotencyKey: eventId } : {});
      });
      expect(sent).toBe("sent");
    } finally {
      await store.close();
    }
    return ledger.read(handler);
  };

  it("a consumer SIGKILLed right after the push, before its record commits: the redelivery's push is absorbed by the idempotency key", async () => {
    const after = await crashThenRedeliver("h", "keyed");
    expect(after.pushes, "deliveries").toBe(1);
    expect(after.duplicates).toBe(0);
    expect(after.attempts, "the redelivery called the provider once more").toBe(2);
    expect(after.absorbed).toBe(1);
  });

  it("the same crash with a naive provider call (no idempotency key) pushes twice: what the key buys", async () => {
    const after = await crashThenRedeliver("n", "naive");
    expect(after.pushes).toBe(2);
    expect(after.duplicates).toBe(1);
    expect(after.absorbed).toBe(0);
  });

  it("as many concurrent sends as pool connections do not stall on the pool", async () => {
    await ledger.init(["p"]);
    const store = new PostgresSideEffectStore({
      connectionString: DATABASE_URL,
      schema: ledger.schema,
      tablePrefix: "f",
      poolSize: 2,
    });
    try {
      const t0 = Date.now();
      const results = await Promise.allSettled(
        [1, 2].map((i) =>
          store.sendOnce("p", `pool-${id}-${i}`, async () => {
            await new Promise((r) => setTimeout(r, 50)); // both transactions are open before either pushes
            await store.push("p", `pool-${id}-${i}`);
          }),
        ),
      );
      const ms = Date.now() - t0;
      const failed = results
        .filter((r) => r.status === "rejected")
        .map((r) => String((r as PromiseRejectedResult).reason?.message ?? r));
      expect(failed, `sendOnce failed after ${ms} ms`).toEqual([]);
      expect(ms).toBeLessThan(2000);
    } finally {
      await store.close();
    }
  });
});
