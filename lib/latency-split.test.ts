import { describe, expect, it } from "vitest";
import { latencyVerdict, runtimeUnknown, UNEXPLAINED_TEXT, type RuntimePart } from "./latency-split";
import { RUNTIME_SIGNAL_METRICS } from "@/names/runtime";

const loop = (seconds: number): RuntimePart => ({
  status: "ok",
  runtime: "node",
  metric: "nodejs_eventloop_lag_p99_seconds",
  meaning: "event loop p99",
  seconds,
});
const none = runtimeUnknown(RUNTIME_SIGNAL_METRICS);

describe("the latency split names a cause only with evidence", () => {
  it("Redis' own time far below the p99 and no runtime signal: 'not Redis', the consumer's side not known — never 'Redis is slow'", () => {
    // A 65 ms p99 with Redis at 180 µs per call, from a consumer that exports no runtime signal.
    const v = latencyVerdict(0.065, none, 180, true);
    expect(v.verdict).toBe("not_redis");
    expect(v.text).toContain("not Redis' own time");
    expect(v.text).toContain("not known for this runtime");
    expect(v.text).not.toMatch(/Redis is slow|mostly Redis/);
  });

  it("neither the event loop nor Redis' per-call time explains the p99: 'unexplained — queueing in Redis …? (SLOWLOG)', not the larger of two small numbers", () => {
    // A Redis function blocking the server: the checks wait 900 ms, the loop lags 3 ms, our commands run in 9 µs.
    const v = latencyVerdict(0.9, loop(0.003), 9, true);
    expect(v.verdict).toBe("unexplained");
    expect(v.text).toContain(UNEXPLAINED_TEXT);
    expect(v.text).not.toContain("saturated");
  });

  it("no runtime signal at all: says 'not known for this runtime' with every metric that would tell it", () => {
    const v = latencyVerdict(0.03, none, 6_000, false);
    expect(v.verdict).toBeNull();
    for (const m of RUNTIME_SIGNAL_METRICS) expect(v.text).toContain(m);
    expect(v.text).toContain("not known for this runtime");
  });

  it("a JVM's GC pause that covers the p99 is the cause, named as the JVM's", () => {
    const gc: RuntimePart = {
      status: "ok",
      runtime: "jvm",
      metric: "jvm_gc_pause_seconds",
      meaning: "JVM GC pause max",
      seconds: 0.07,
    };
    const v = latencyVerdict(0.08, gc, 150, true);
    expect(v.verdict).toBe("consumer");
    expect(v.text).toBe("JVM GC pause max 70 ms · Redis 150 µs/call · the consumer is saturated (not Redis)");
  });

  it("Redis' own time that covers the p99 names Redis", () => {
    expect(latencyVerdict(0.12, loop(0.002), 90_000, true).verdict).toBe("redis");
  });
});
