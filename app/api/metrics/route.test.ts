/**
 * `GET /api/metrics` over the app's own Registry with the demo consumer running on it (embedded
 * transport): what Prometheus scrapes carries the handler-time histogram of every demo handler, and
 * in embedded mode every series marked as the demo's.
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
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { EMBEDDED_SERIES_LABEL } from "@/names/observe";

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
configOfFile();

describe("GET /api/metrics", () => {
  it("carries handler_execution_time_seconds_bucket for every demo handler, both success values, up to +Inf, from start-up", async () => {
    useConfig({ REDIS_URL: "redis://127.0.0.1:1", KAFKA_BROKERS: "127.0.0.1:1" });
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

  it("in embedded mode marks every sample app_mode=\"embedded\": the demo's figures are no real service's", async () => {
    useConfig();
    await demo.start();
    const text = await (await metricsGET()).text();
    const samples = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    expect(samples.length).toBeGreaterThan(0);
    const mark = `${EMBEDDED_SERIES_LABEL.name}="${EMBEDDED_SERIES_LABEL.value}"`;
    expect(samples.filter((l) => !l.includes(mark))).toEqual([]);
    expect(text).toContain(`${METRIC_NAMES.processed}{${mark},service="${service}"`);
  });
});
