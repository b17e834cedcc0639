/**
 * One consumer replica as its own process, for the lease heartbeat's two-process test: `node
 * --import tsx server/testing/heartbeat-consumer.ts <redisUrl> <service> <uuid> <leaseMs>
 * <handlerMs> <on|off>` delivers ONE message (`uuid`, position in:0:7) to a Deduplicator on
 * RedisRepository (lease marking, `heartbeat` on or off) until it is processed or swallowed, as a
 * redelivering consumer would: an `InProgressError` (another replica holds the key) is tried again
 * every 100 ms. The handler works `handlerMs` without looking at `msg.signal` (a side effect already
 * under way), then appends this pid to the Redis list `<service>:effects` — the side effect the
 * test counts. Prints one JSON line per event: `started`, `aborted` (with the reason's `why`),
 * `finished`, `in-progress` (first try only), `exit` (with `leaseLost`, this process's
 * `deduplication_lease_lost_total`).
 */
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { Deduplicator, InProgressError, LeaseLostError, newMessage, RedisRepository } from "@/server/dedup";
import { METRIC_NAMES } from "@/names/dedup";
import { registryTotal } from "@/server/testing/counter-total";

const [url, service, uuid, leaseMs, handlerMs, heartbeat] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const emit = (event: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, pid: process.pid, at: Date.now(), ...extra })}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const redis = new Redis(url, { maxRetriesPerRequest: 2 });
const registry = new Registry();
const dedup = new Deduplicator({
  repository: new RedisRepository(redis),
  service,
  registry,
  leaseMs: Number(leaseMs),
  heartbeat: heartbeat === "on",
  logger: (line) => emit("log", { line }),
});
const run = dedup.middleware(async (msg) => {
  emit("started");
  msg.signal.addEventListener("abort", () => {
    const r: unknown = msg.signal.reason;
    emit("aborted", { why: r instanceof LeaseLostError ? r.why : String(r) });
  });
  await sleep(Number(handlerMs));
  await redis.rpush(`${service}:effects`, String(process.pid));
  emit("finished");
});

async function main(): Promise<void> {
  for (let tries = 0; ; tries++) {
    const msg = newMessage(uuid, `{"uuid":"${uuid}"}`);
    msg.context = { handler: "h", topic: "in", partition: 0, offset: "7" };
    try {
      await run(msg);
      break;
    } catch (e) {
      if (!(e instanceof InProgressError)) throw e;
      if (tries === 0) emit("in-progress");
      await sleep(100);
    }
  }
  emit("exit", { leaseLost: await registryTotal(registry, METRIC_NAMES.leaseLost) });
  await redis.quit();
}

main().catch((e: unknown) => {
  emit("error", { message: String(e) });
  process.exitCode = 1;
  void redis.quit();
});
