import { describe, expect, it } from "vitest";
import { latencyPartsOf, runtimePartOf } from "./overview-signals";

describe("the latency split reads the service's own runtime signal", () => {
  it("a JVM service exporting simpleclient_hotspot's GC summary is split by its GC pause, not called 'not known'", () => {
    const samples = [
      { labels: { service: "billing", runtime: "jvm", metric: "jvm_gc_collection_seconds" }, value: 0.06 },
      {
        labels: { service: "notification", runtime: "node", metric: "nodejs_eventloop_lag_p99_seconds" },
        value: 0.001,
      },
    ];
    const rt = runtimePartOf(samples, "billing");
    expect(rt).toMatchObject({ status: "ok", runtime: "jvm", metric: "jvm_gc_collection_seconds" });
    const parts = latencyPartsOf(rt, [{ labels: { command: "set" }, value: 40 }], 0.07);
    expect(parts?.verdict).toBe("consumer");
    expect(parts?.text).toContain("JVM GC pause mean 60 ms");
  });

  it("a service exporting no runtime signal is 'not known for this runtime' beside another service's event loop", () => {
    const samples = [
      { labels: { service: "notification", runtime: "node", metric: "nodejs_eventloop_lag_p99_seconds" }, value: 0.2 },
    ];
    const parts = latencyPartsOf(runtimePartOf(samples, "billing"), [{ labels: { command: "set" }, value: 8 }], 0.065);
    expect(parts?.runtime.status).toBe("unknown");
    expect(parts?.verdict).toBe("not_redis");
    expect(parts?.text).not.toContain("event loop");
  });
});
