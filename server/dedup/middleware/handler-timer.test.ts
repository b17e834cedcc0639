import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HANDLER_SUCCESSES, METRIC_NAMES } from "../../../names/dedup";
import { HANDLER_TIME_BUCKETS } from "../../../names/buckets";
import { handlerTimer } from "./handler-timer";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage } from "../message";
import { dedupMetrics } from "../metrics/metrics";
import { MemoryPubSub } from "../pubsub";
import { Router } from "../router/router";
import { defaultStack, describeStack } from "../stack";
import { DEFAULT_LEASE_MS } from "../deduplicator/deduplicator-options";

type Values = Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;

/** `{ "<handler>/<success>": { count, sum, le<bound>: cumulative } }` of the histogram, through `metric.get()`. */
async function histogram(registry: Registry) {
  const values = (await dedupMetrics(registry).handlerTime.get()).values as Values;
  const out: Record<string, Record<string, number>> = {};
  for (const v of values) {
    const k = `${v.labels.handler}/${v.labels.success}`;
    out[k] ??= {};
    const kind = v.metricName!.slice(METRIC_NAMES.handlerExecutionTime.length + 1);
    out[k][kind === "bucket" ? `le${v.labels.le}` : kind] = v.value;
  }
  return out;
}

describe("handlerTimer: handler_execution_time_seconds{service,handler,success}", () => {
  it("has both success series of every handler at 0 from its registration, before any delivery", async () => {
    const registry = new Registry();
    const router = new Router();
    const ps = new MemoryPubSub();
    const timer = handlerTimer({ registry, service: "svc" });
    router.addHandler({ name: "a", topic: "t", subscriber: ps, handler: async () => undefined, middleware: [timer] });
    router.addHandler({ name: "b", topic: "t", subscriber: ps, handler: async () => undefined, middleware: [timer] });
    const h = await histogram(registry);
    expect(Object.keys(h).sort()).toEqual(["a", "b"].flatMap((n) => HANDLER_SUCCESSES.map((s) => `${n}/${s}`)).sort());
    for (const s of Object.values(h)) expect(s).toMatchObject({ count: 0, sum: 0, "le+Inf": 0 });
    const values = (await dedupMetrics(registry).handlerTime.get()).values as Values;
    expect(values.every((v) => v.labels.service === "svc")).toBe(true);
    expect(await registry.metrics()).toContain(
      'handler_execution_time_seconds_bucket{service="svc",handler="a",success="true",le="60"} 0',
    );
  });

  it("times each attempt of the handler alone, by success: Retry's backoff and the other middleware are outside it", async () => {
    const registry = new Registry();
    let clock = 0;
    const ps = new MemoryPubSub();
    const router = new Router({ onError: () => undefined });
    let calls = 0;
    router.addHandler({
      name: "h",
      topic: "t",
      subscriber: ps,
      handler: async () => {
        calls++;
        clock += calls === 1 ? 40_000 : 3_000; // the first attempt runs 40 s and fails, the retry 3 s
        if (calls === 1) throw new Error("slow and failed");
      },
      middleware: [
        // A retry whose "backoff" moves the clock by 100 s: it must not reach the histogram.
        (next) => async (m) => {
          try {
            return await next(m);
          } catch {
            clock += 100_000;
            return next(m);
          }
        },
        handlerTimer({ registry, service: "svc", now: () => clock }),
      ],
    });
    expect(await router.sink("h").deliver(newMessage("u1", "{}"))).toBe("ack");
    const h = await histogram(registry);
    expect(h["h/false"]).toMatchObject({ count: 1, sum: 40, le30: 0, le60: 1 });
    expect(h["h/true"]).toMatchObject({ count: 1, sum: 3, "le2.5": 0, le5: 1, le60: 1 });
  });

  it("has buckets past the default lease, so a handler that outlives it is told apart from one near it", () => {
    const lease = DEFAULT_LEASE_MS / 1000;
    expect(HANDLER_TIME_BUCKETS).toContain(lease / 2);
    expect(HANDLER_TIME_BUCKETS).toContain(lease);
    expect(HANDLER_TIME_BUCKETS.at(-1)!).toBeGreaterThan(lease);
  });

  it("defaultStack puts it innermost when the Deduplicator has a registry, and leaves it out without one", () => {
    const ps = new MemoryPubSub();
    const base = { dlqPublisher: ps, dlqTopic: "dlq" };
    expect(
      describeStack(
        defaultStack({ ...base, dedup: { repository: new MemoryRepository(), registry: new Registry() } }),
      ).at(-1),
    ).toBe("handlerTimer");
    expect(
      describeStack(
        defaultStack({
          ...base,
          order: "dedup-outside",
          dedup: { repository: new MemoryRepository(), registry: new Registry() },
        }),
      ).at(-1),
    ).toBe("handlerTimer");
    expect(describeStack(defaultStack({ ...base, dedup: { repository: new MemoryRepository() } }))).not.toContain(
      "handlerTimer",
    );
  });

  it("rejects a missing registry and a bad service with a RangeError naming the option", () => {
    expect(() => handlerTimer({} as never)).toThrow(/registry/);
    expect(() => handlerTimer({ registry: new Registry(), service: "a b" })).toThrow(RangeError);
  });
});
