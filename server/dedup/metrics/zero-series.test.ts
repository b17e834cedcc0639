import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Deduplicator } from "../deduplicator/deduplicator";
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  PAYLOAD_DIFFERENCES,
  POISON_REASON_CLASSES,
  PROCESSED_RESULTS,
} from "../../../names/dedup";
import { MemoryRepository } from "../repository/memory-repository";
import { dedupMetrics } from "./metrics";
import { dedupRecorder } from "./recorder";
import { poisonQueue } from "../middleware/poison-queue";
import { MemoryPubSub } from "../pubsub";
import { Router } from "../router/router";

/** `{ "<label values>": value }` of one counter, read through `metric.get()`. */
async function series(
  registry: Registry,
  name: keyof ReturnType<typeof dedupMetrics>,
  pick: string[],
): Promise<Record<string, number>> {
  const m = (
    await (
      dedupMetrics(registry)[name] as {
        get(): Promise<{ values: Array<{ labels: Record<string, string | number>; value: number }> }>;
      }
    ).get()
  ).values;
  return Object.fromEntries(m.map((v) => [pick.map((l) => String(v.labels[l])).join("/"), v.value]));
}

function stack(registry: Registry, service = "svc") {
  const ps = new MemoryPubSub();
  const dedup = new Deduplicator({ repository: new MemoryRepository(), service, registry });
  const pq = poisonQueue(ps, "dlq", { registry, service });
  return { ps, middleware: [pq, dedup.middleware] };
}

describe("zero series: every label value a panel or rule reads exists at 0 before its first event", () => {
  it("deduplication_errors_total has redis_timeout, redis_conn and marshal at 0 as soon as a recorder for the service exists", async () => {
    const registry = new Registry();
    expect(await series(registry, "errors", ["service", "reason"])).toEqual({});
    dedupRecorder(registry, "billing");
    new Deduplicator({ repository: new MemoryRepository(), service: "notification", registry });
    const errors = await series(registry, "errors", ["service", "reason"]);
    expect(Object.keys(errors).sort()).toEqual(
      ["billing", "notification"].flatMap((s) => DEDUP_ERROR_REASONS.map((r) => `${s}/${r}`)).sort(),
    );
    expect(Object.values(errors).every((v) => v === 0)).toBe(true);
  });

  it("Router.addHandler creates processed × result, deduplicated, duplicates × cause, payload conflicts, unchecked × reason and poisoned × reason class at 0, before any delivery", async () => {
    const registry = new Registry();
    const { ps, middleware } = stack(registry);
    const router = new Router();
    router.addHandler({ name: "h1", topic: "t1", subscriber: ps, handler: async () => undefined, middleware });
    expect(await series(registry, "processed", ["handler", "result"])).toEqual(
      Object.fromEntries(PROCESSED_RESULTS.map((r) => [`h1/${r}`, 0])),
    );
    expect(await series(registry, "deduplicated", ["topic", "handler"])).toEqual({ "t1/h1": 0 });
    expect(await series(registry, "duplicatesByCause", ["handler", "cause"])).toEqual(
      Object.fromEntries(DUPLICATE_CAUSES.map((c) => [`h1/${c}`, 0])),
    );
    expect(await series(registry, "poisoned", ["service", "topic", "handler", "reason_poisoned"])).toEqual(
      Object.fromEntries(POISON_REASON_CLASSES.map((c) => [`svc/t1/h1/${c}`, 0])),
    );
    for (const name of ["inProgress", "released", "leaseLost"] as const)
      expect(await series(registry, name, ["handler"])).toEqual({ h1: 0 });
    expect(await series(registry, "payloadConflicts", ["service", "handler", "difference"])).toEqual(
      Object.fromEntries(PAYLOAD_DIFFERENCES.map((d) => [`svc/h1/${d}`, 0])),
    );
    expect(await series(registry, "unchecked", ["service", "handler", "reason"])).toEqual(
      Object.fromEntries(DEDUP_ERROR_REASONS.map((r) => [`svc/h1/${r}`, 0])),
    );
    expect(POISON_REASON_CLASSES).toEqual([
      "redis_timeout",
      "redis_conn",
      "marshal",
      "non_retryable",
      "in_progress",
      "payload_conflict",
      "handler_error",
    ]);
  });

  it("a handler registered later gets its zeros at its registration; Router-level middleware added after a handler registers it too", async () => {
    const registry = new Registry();
    const { ps, middleware } = stack(registry);
    const router = new Router();
    router.addHandler({ name: "early", topic: "t", subscriber: ps, handler: async () => undefined });
    expect(await series(registry, "processed", ["handler"])).toEqual({});
    router.use(...middleware);
    expect(Object.keys(await series(registry, "processed", ["handler", "result"]))).toHaveLength(3);
    router.addHandler({ name: "late", topic: "t", subscriber: ps, handler: async () => undefined });
    const processed = await series(registry, "processed", ["handler", "result"]);
    expect(Object.keys(processed).sort()).toEqual(
      ["early", "late"].flatMap((h) => PROCESSED_RESULTS.map((r) => `${h}/${r}`)).sort(),
    );
    expect(Object.keys(await series(registry, "poisoned", ["handler", "reason_poisoned"]))).toHaveLength(
      2 * POISON_REASON_CLASSES.length,
    );
  });

  it("the zeros then count up: the first error, DLQ publish and duplicate are increases from 0", async () => {
    const registry = new Registry();
    const { ps, middleware } = stack(registry);
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "h",
      topic: "t",
      subscriber: ps,
      handler: async (m) => {
        if (m.uuid === "bad") throw new Error("boom");
      },
      middleware,
    });
    const sink = router.sink("h");
    const msg = (uuid: string) => ({
      uuid,
      metadata: {},
      payload: Buffer.alloc(0),
      signal: new AbortController().signal,
      context: {},
    });
    expect(await sink.deliver(msg("a"))).toBe("ack");
    expect(await sink.deliver(msg("a"))).toBe("ack");
    expect(await sink.deliver(msg("bad"))).toBe("ack"); // to the DLQ
    const poisoned = await series(registry, "poisoned", ["reason_poisoned"]);
    expect(poisoned).toMatchObject({ handler_error: 1, non_retryable: 0, marshal: 0 });
    expect(await series(registry, "processed", ["result"])).toEqual({ success: 1, deduplicated: 1, error: 1 });
    expect(await series(registry, "duplicatesByCause", ["cause"])).toEqual({ redelivery: 0, republish: 0, unknown: 1 });
  });

  it("the fingerprint fallbacks exist at 0 for a handler that chose fingerprint fields, and not at all for one that did not", async () => {
    const registry = new Registry();
    const ps = new MemoryPubSub();
    const router = new Router();
    const dedup = (fingerprint?: { exclude: string[] }) =>
      new Deduplicator({
        repository: new MemoryRepository(),
        service: "svc",
        registry,
        ...(fingerprint ? { fingerprint } : {}),
      }).middleware;
    router.addHandler({
      name: "fields",
      topic: "t1",
      subscriber: ps,
      handler: async () => undefined,
      middleware: [dedup({ exclude: ["/sentAt"] })],
    });
    router.addHandler({
      name: "bytes",
      topic: "t2",
      subscriber: ps,
      handler: async () => undefined,
      middleware: [dedup()],
    });
    expect(await series(registry, "fingerprintFallbacks", ["service", "handler"])).toEqual({ "svc/fields": 0 });
  });
});
