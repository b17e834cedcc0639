/**
 * The contract every `DedupRepository` keeps, whatever the store: run on the in-memory repository
 * (`memory-repository.test.ts`, fake timers) and on Redis, standalone and Cluster
 * (`redis-repository.suite.ts`, real waits). A new store passes this suite before the Deduplicator
 * may run on it; the store's own suite keeps only what needs that store (scripts, pipelines, slots).
 */
import { describe, expect, it } from "vitest";
import type { DedupRepository } from "./repository";
import { doneValue, parseClaimValue, storedFingerprint } from "./stored-value";
import { Deduplicator } from "../deduplicator/deduplicator";
import { PayloadConflictError } from "../errors";
import type { Message } from "../message";

/** One store under test: the repository and what the suite needs to look at it from outside. */
export interface RepositoryUnderTest {
  readonly repo: DedupRepository;
  /** A key name of this test's own (a random prefix), remembered for clean-up. */
  key(id: string): string;
  /** The key's value and remaining TTL in ms, `null`s when absent — read past the repository. */
  inspect(key: string): Promise<{ value: string | null; pttlMs: number | null }>;
  /** Lets `ms` pass for the store (fake timers for memory, a real wait for Redis). */
  elapse(ms: number): Promise<void>;
}

/** The TTL of the expiry case: short, so a real store's wait stays under half a second. */
const SHORT_TTL_MS = 300;

/** Registers the contract's tests for the store that `make` gives (called once per test). */
export function repositoryContractSuite(label: string, make: () => RepositoryUnderTest): void {
  describe(`repository contract on ${label}`, () => {
    it("claims a key once (SET NX PX): the second claim reads the first value, and the key is free again after its TTL", async () => {
      const s = make();
      const k = s.key("claim");
      expect(await s.repo.claim(k, "processing:a", SHORT_TTL_MS)).toBeNull();
      expect(await s.repo.claim(k, "processing:b", SHORT_TTL_MS)).toBe("processing:a");
      const { pttlMs } = await s.inspect(k);
      expect(pttlMs).toBeGreaterThan(0);
      expect(pttlMs).toBeLessThanOrEqual(SHORT_TTL_MS);
      await s.elapse(SHORT_TTL_MS + 50);
      expect(await s.repo.claim(k, "processing:b", SHORT_TTL_MS)).toBeNull();
    });

    it("compare-and-set / compare-and-delete touch the key only while it holds the expected value", async () => {
      const s = make();
      const k = s.key("cas");
      await s.repo.claim(k, "processing:me", 10_000);
      expect(await s.repo.compareAndSet(k, "processing:other", "done", 60_000)).toBe(false);
      expect(await s.repo.compareAndDelete(k, "processing:other")).toBe(false);
      expect((await s.inspect(k)).value).toBe("processing:me");
      expect(await s.repo.compareAndSet(k, "processing:me", "done", 60_000)).toBe(true);
      const after = await s.inspect(k);
      expect(after.value).toBe("done");
      expect(after.pttlMs).toBeGreaterThan(50_000);
      expect(await s.repo.compareAndDelete(k, "processing:me")).toBe(false);
      expect(await s.repo.compareAndDelete(k, "done")).toBe(true);
      expect((await s.inspect(k)).value).toBeNull();
    });

    it("a lease renewal extends the claim only while it holds our token, and never rewrites the value", async () => {
      const s = make();
      if (!s.repo.extendLease) return;
      const k = s.key("extend");
      expect(await s.repo.claim(k, "processing:me", SHORT_TTL_MS)).toBeNull();
      await s.elapse(SHORT_TTL_MS / 2);
      expect(await s.repo.extendLease(k, "processing:me", 60_000)).toBe(true);
      const renewed = await s.inspect(k);
      expect(renewed.value).toBe("processing:me");
      expect(renewed.pttlMs).toBeGreaterThan(50_000);
      // Past the first TTL the renewed claim still stands: a second consumer reads it.
      await s.elapse(SHORT_TTL_MS);
      expect(await s.repo.claim(k, "processing:other", SHORT_TTL_MS)).toBe("processing:me");
      // Someone else's token extends nothing and changes nothing.
      expect(await s.repo.extendLease(k, "processing:other", 1)).toBe(false);
      expect((await s.inspect(k)).pttlMs).toBeGreaterThan(50_000);
      // A claim taken over, or expired and gone, is not ours to renew.
      expect(await s.repo.compareAndDelete(k, "processing:me")).toBe(true);
      expect(await s.repo.extendLease(k, "processing:me", 60_000)).toBe(false);
      expect(await s.repo.claim(k, "processing:other", 60_000)).toBeNull();
      expect(await s.repo.extendLease(k, "processing:me", 60_000)).toBe(false);
      expect((await s.inspect(k)).value).toBe("processing:other");
    });

    it("a batch of claims gives per-claim replies in request order, the same as one-by-one claims", async () => {
      const s = make();
      const ids = Array.from({ length: 9 }, (_, i) => s.key(`batch${i}`));
      const seed = async () => {
        for (const [i, k] of ids.entries()) {
          await s.repo.compareAndDelete(k, "done");
          await s.repo.compareAndDelete(k, "processing:other");
          await s.repo.compareAndDelete(k, "processing:mine");
          if (i % 3 === 1) await s.repo.claim(k, "done", 60_000);
          if (i % 3 === 2) await s.repo.claim(k, "processing:other", 60_000);
        }
      };
      await seed();
      const batch = await s.repo.claimBatch(ids.map((k) => ({ key: k, value: "processing:mine", ttlMs: 60_000 })));
      await seed();
      const single: Array<string | null> = [];
      for (const k of ids) single.push(await s.repo.claim(k, "processing:mine", 60_000));
      expect(batch).toEqual(single);
      expect(batch).toEqual(ids.map((_, i) => [null, "done", "processing:other"][i % 3]));
    });

    it("a batch of compare-and-sets changes only the keys that hold their expected value", async () => {
      const s = make();
      if (!s.repo.compareAndSetBatch) return;
      const ids = Array.from({ length: 6 }, (_, i) => s.key(`casb${i}`));
      for (const [i, k] of ids.entries()) await s.repo.claim(k, `processing:t${i}`, 30_000);
      const marks = await s.repo.compareAndSetBatch(
        ids.map((k, i) => ({ key: k, expected: `processing:t${i === 4 ? "x" : i}`, value: "done", ttlMs: 60_000 })),
      );
      expect(marks).toEqual(ids.map((_, i) => i !== 4));
      expect((await s.inspect(ids[4]!)).value).toBe("processing:t4");
      expect((await s.inspect(ids[0]!)).value).toBe("done");
    });

    it("done marks write unconditionally with their TTL and return each key's previous value", async () => {
      const s = make();
      if (!s.repo.markDone || !s.repo.markDoneBatch) return;
      const ids = Array.from({ length: 6 }, (_, i) => s.key(`mark${i}`));
      for (const [i, k] of ids.entries()) {
        if (i % 3 === 1) await s.repo.claim(k, "processing:mine", 60_000);
        if (i % 3 === 2) await s.repo.claim(k, "processing:other", 60_000);
      }
      const prev = await s.repo.markDoneBatch(ids.map((k, i) => ({ key: k, value: `done:in:0:${i}`, ttlMs: 50_000 })));
      expect(prev).toEqual(ids.map((_, i) => [null, "processing:mine", "processing:other"][i % 3]));
      for (const [i, k] of ids.entries()) {
        const { value, pttlMs } = await s.inspect(k);
        expect(value).toBe(`done:in:0:${i}`);
        expect(pttlMs).toBeGreaterThan(45_000);
        expect(pttlMs).toBeLessThanOrEqual(50_000);
      }
      expect(await s.repo.markDone(ids[0]!, "done", 1_000)).toBe("done:in:0:0");
      expect((await s.inspect(ids[0]!)).value).toBe("done");
    });

    it("every write that records done keeps the payload fingerprint in the value, as given", async () => {
      const s = make();
      const fp = "AbC-_9z";
      // A store without the optional batch or unconditional form is held to the form the Deduplicator falls back to.
      const cas = (k: string, done: string) => s.repo.compareAndSet(k, "processing:me", done, 60_000);
      const writes: Array<[string, (k: string, done: string) => Promise<unknown>]> = [
        ["markDone", (k, done) => s.repo.markDone?.(k, done, 60_000) ?? cas(k, done)],
        [
          "markDoneBatch",
          (k, done) => s.repo.markDoneBatch?.([{ key: k, value: done, ttlMs: 60_000 }]) ?? cas(k, done),
        ],
        ["compareAndSet", cas],
        [
          "compareAndSetBatch",
          (k, done) =>
            s.repo.compareAndSetBatch?.([{ key: k, expected: "processing:me", value: done, ttlMs: 60_000 }]) ??
            cas(k, done),
        ],
      ];
      for (const [name, write] of writes) {
        const k = s.key(`fpwrite-${name}`);
        expect(await s.repo.claim(k, "processing:me", 10_000)).toBeNull();
        const done = doneValue("orders:0:7", fp);
        await write(k, done);
        if (name.startsWith("markDone") && !s.repo[name as "markDone"])
          await s.repo.compareAndSet(k, "processing:me", done, 60_000);
        const stored = await s.repo.claim(k, "processing:later", 10_000);
        expect({ name, fingerprint: stored === null ? undefined : storedFingerprint(stored) }).toEqual({
          name,
          fingerprint: fp,
        });
      }
    });

    it("the fingerprint of the chosen fields survives the done mark: after it, a copy with other chosen fields is still a conflict, one differing only in an excluded field a repeat", async () => {
      const s = make();
      const key = s.key("fp-e2e");
      let runs = 0;
      const dedup = new Deduplicator({
        repository: s.repo,
        prefix: key.slice(0, -":fp-e2e".length),
        fingerprint: { exclude: ["/sentAt"] },
        hotKeys: null,
        logger: () => undefined,
      });
      const run = dedup.middleware(async () => void runs++);
      const signal = new AbortController().signal;
      const copy = (offset: number, payload: object): Message => ({
        uuid: "fp-e2e",
        metadata: {},
        payload: Buffer.from(JSON.stringify(payload)),
        signal,
        context: { handler: "h", topic: "orders", partition: 0, offset: String(offset) },
      });
      await run(copy(1, { amount: 10, sentAt: "10:00:00" }));
      const stored = (await s.inspect(key)).value!;
      expect(parseClaimValue(stored)).toMatchObject({ state: "done", position: "orders:0:1" });
      expect(storedFingerprint(stored)).toMatch(/^[A-Za-z0-9_-]{7}$/);
      // A producer retry: re-serialised with a new sentAt and another key order.
      await run(copy(2, { sentAt: "10:00:05", amount: 10 }));
      expect(runs).toBe(1);
      await expect(run(copy(3, { amount: 11, sentAt: "10:00:00" }))).rejects.toBeInstanceOf(PayloadConflictError);
      expect(runs).toBe(1);
      expect((await s.inspect(key)).value).toBe(stored);
    });
  });
}
