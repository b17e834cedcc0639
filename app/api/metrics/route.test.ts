/**
 * `GET /api/metrics` over the app's own Registry with the demo consumer running on it (embedded
 * transport): what Prometheus scrapes carries the handler-time histogram of every demo handler.
 */
import { afterAll, describe, expect, it } from "vitest";
import { GET as metricsGET } from "@/app/api/metrics/route";
import { HANDLER_SUCCESSES, METRIC_NAMES } from "@/names/dedup";
import { MemoryRepository } from "@/server/dedup";
import { DemoService } from "@/server/demo/demo";
import { DEMO_HANDLER_SPECS } from "@/server/notification/demo-handlers";
import { MemorySideEffectStore } from "@/server/notification/side-effects";
import { appRegistry } from "@/server/registry";
import { MemoryTransport } from "@/server/transport";

const service = `metrics-route-${Math.random().toString(36).slice(2, 8)}`;
const demo = new DemoService({
  transport: new MemoryTransport(),
  repository: new MemoryRepository(),
  store: new MemorySideEffectStore(),
  service,
  registry: appRegistry(),
  ratePerSec: 0,
  backgroundDuplicates: false,
});

afterAll(() => demo.stop());

describe("GET /api/metrics", () => {
  it("carries handler_execution_time_seconds_bucket for every demo handler, both success values, up to +Inf, from start-up", async () => {
    await demo.start();
    const res = await metricsGET();
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const h of DEMO_HANDLER_SPECS) {
      for (const success of HANDLER_SUCCESSES) {
        for (const le of ["30", "60", "+Inf"]) {
          expect(text, `${h.name} ${success} ${le}`).toContain(
            `${METRIC_NAMES.handlerExecutionTime}_bucket{service="${service}",handler="${h.name}",success="${success}",le="${le}"} 0`,
          );
        }
      }
    }
  });
});
