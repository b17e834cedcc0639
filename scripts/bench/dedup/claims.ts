/**
 * Claims/s of one marking in each mode: per message (one claim awaited at a time), autopipelined
 * (`--concurrency` in flight), batch (`Deduplicator.prepareBatch`, one round trip) and batch x4 (four
 * batches in flight); and end-to-end batch msgs/s through `Router.deliverBatch`.
 */
import type { Redis } from "ioredis";
import { Registry } from "prom-client";
import { Deduplicator, type Marking, MemoryPubSub, RedisRepository, NAIVE_VALUE, Router } from "@/server/dedup";
import { cleanup, messages, timeIt, valueFor } from "./measure";
import { BATCH, CONCURRENCY, run } from "./settings";

const ttl = 60_000;

/** One claim awaited at a time (latency-bound), at most 20k. */
async function perMessage(client: Redis, marking: Marking, n: number): Promise<number> {
  const repo = new RedisRepository(client);
  const seqN = Math.min(n, 20_000);
  const p = `${run}:${marking}:seq:dedup:h:`;
  const rate =
    seqN /
    (await timeIt(async () => {
      for (let i = 0; i < seqN; i++) await repo.claim(p + i, valueFor(marking, i), ttl);
    }));
  await cleanup(client, `${run}:${marking}:seq`);
  return rate;
}

/** `--concurrency` claims in flight on a client with enableAutoPipelining. */
async function autopipelined(client: Redis, auto: Redis, marking: Marking, n: number): Promise<number> {
  const autoRepo = new RedisRepository(auto);
  const p = `${run}:${marking}:auto:dedup:h:`;
  let next = 0;
  const rate =
    n /
    (await timeIt(async () => {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < n; i = next++) await autoRepo.claim(p + i, valueFor(marking, i), ttl);
        }),
      );
    }));
  await cleanup(client, `${run}:${marking}:auto`);
  return rate;
}

/**
 * Batches of `--batch` claimed by `streams` loops at once, under `<run>:<marking>:<tag>`: claims/s,
 * and the client CPU (µs) the timed claims took, per claim.
 */
async function batches(
  client: Redis,
  marking: Marking,
  n: number,
  tag: string,
  streams: number,
): Promise<{ rate: number; cpuUs: number }> {
  const repo = new RedisRepository(client);
  const dedup = new Deduplicator({
    repository: repo,
    prefix: `${run}:${marking}:${tag}:dedup:h`,
    marking,
    ttlMs: ttl,
    leaseMs: ttl,
  });
  // naive marking has no batch hook in the middleware (Watermill claims right before the handler):
  // its batch figure is the repository's claimBatch with the naive value.
  const msgs = messages(n, streams === 1 ? `${marking}` : `${marking}${streams}`);
  let at = 0;
  const cpu0 = process.cpuUsage();
  const rate =
    n /
    (await timeIt(async () => {
      await Promise.all(
        Array.from({ length: streams }, async () => {
          for (let i = at; i < n; i = at) {
            at += BATCH;
            const chunk = msgs.slice(i, i + BATCH);
            if (marking === "naive")
              await repo.claimBatch(chunk.map((m) => ({ key: dedup.keyOf(m), value: NAIVE_VALUE, ttlMs: ttl })));
            else await dedup.prepareBatch(chunk);
          }
        }),
      );
    }));
  const cpu = process.cpuUsage(cpu0);
  await cleanup(client, `${run}:${marking}:${tag}`);
  return { rate, cpuUs: (cpu.user + cpu.system) / n };
}

/** Claims/s of `marking` in every mode, `n` claims each, and the client CPU per batch claim. */
export async function claimsPerSec(
  client: Redis,
  auto: Redis,
  marking: Marking,
  n: number,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  out["per-message"] = await perMessage(client, marking, n);
  out.autopipelined = await autopipelined(client, auto, marking, n);
  const batch = await batches(client, marking, n, "batch", 1);
  out.batch = batch.rate;
  // Client CPU per batch claim: independent of the machine's load, unlike claims/s.
  out["batch client cpu us"] = batch.cpuUs;
  // Four partitions' batches in flight at once (a consumer with partitionsConsumedConcurrently = 4).
  out["batch x4"] = (await batches(client, marking, n, "batch4", 4)).rate;
  return out;
}

/** Batch msgs/s through Router.deliverBatch: the claim, a no-op handler and the done mark. */
export async function endToEnd(client: Redis, marking: Marking, N: number): Promise<number> {
  const prefix = `${run}:${marking}:e2e:dedup:h`;
  const router = new Router({ onError: (e) => console.error(e.error) });
  const ps = new MemoryPubSub();
  const dedup = new Deduplicator({
    repository: new RedisRepository(client),
    prefix,
    marking,
    registry: new Registry(),
  });
  router.addHandler({
    name: "h",
    topic: "bench",
    subscriber: ps,
    handler: async () => undefined,
    middleware: [dedup.middleware],
  });
  const sink = router.sink("h");
  const msgs = messages(N, `e2e-${marking}`);
  const secs = await timeIt(async () => {
    for (let i = 0; i < N; i += BATCH) {
      const out = await sink.deliverBatch(msgs.slice(i, i + BATCH).map((m) => ({ ...m, context: {} })));
      if (out.length !== Math.min(BATCH, N - i) || out.some((o) => o !== "ack"))
        throw new Error("end-to-end batch did not ack every message");
    }
  });
  await cleanup(client, prefix);
  return N / secs;
}
