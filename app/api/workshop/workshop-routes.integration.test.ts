/**
 * Workshop runs stay out of production telemetry, on the real stack: three runs on Kafka + Redis
 * while a Prometheus of the test's own scrapes this process's `/api/metrics` (the route itself,
 * served on a free port). Afterwards Prometheus holds no series of the workshop service or of a run
 * topic, and `/api/overview` (reading that Prometheus) lists no workshop handler. Needs
 * `npm run stack:up` (Kafka, Redis) and /usr/bin/prometheus.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as metricsGET } from "@/app/api/metrics/route";
import { GET as overviewGET } from "@/app/api/overview/route";
import { overviewResponseSchema } from "@/lib/api/overview";
import { WORKSHOP_SERVICE } from "@/names/product";
import { parseConfig } from "@/server/config";
import { consumerRuntime } from "@/server/runtime";
import { setObserveContext } from "@/server/observe/context";
import { promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { freePort } from "@/server/testing/net";

const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
let prom: OwnPrometheus | null = null;
let server: Server | null = null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  const port = await freePort();
  // This process's /api/metrics, scraped every second by the test's own Prometheus.
  server = createServer((_req, res) => {
    void metricsGET()
      .then(async (r) =>
        res.writeHead(r.status, { "Content-Type": r.headers.get("content-type") ?? "text/plain" }).end(await r.text()),
      )
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", () => resolve()));
  prom = await startOwnPrometheus({ targets: [`127.0.0.1:${port}`], ruleFiles: [], intervalSec: 1 });
  g.__dedupHealthConfig = parseConfig({
    KAFKA_BROKERS: "127.0.0.1:9092",
    REDIS_URL: "redis://127.0.0.1:6379",
    PROMETHEUS_URL: prom.url,
    DEMO: "off",
  });
  setObserveContext(null);
}, 60_000);

afterAll(async () => {
  await consumerRuntime().close();
  setObserveContext(null);
  delete g.__dedupHealthConfig;
  await prom?.stop();
  server?.close();
}, 60_000);

describe("workshop runs on the real stack", () => {
  it("after 3 runs Prometheus has no workshop series and no run topic; the Overview lists no workshop handler", async () => {
    const runner = consumerRuntime().workshop;
    const runIds: string[] = [];
    for (const name of ["forwarder-republish", "retry-on-error", "anti-correlation-id"]) {
      const runId = runner.start(name);
      runIds.push(runId);
      const v = await runner.wait(runId);
      expect(v.status, v.error ?? "").toBe("done");
      // The run's counters were on the workshop registry: the run view has them.
      expect(v.series.some((s) => s.name === "messages_processed_total" && s.value > 0)).toBe(true);
    }
    await sleep(2500); // two more scrapes after the last run
    expect(await promQuery(prom!.url, "up")).toHaveLength(1);
    expect(await promQuery(prom!.url, `{service="${WORKSHOP_SERVICE}"}`)).toEqual([]);
    expect(await promQuery(prom!.url, `{topic=~"workshop\\\\..*"}`)).toEqual([]);
    for (const id of runIds) expect(await promQuery(prom!.url, `{topic=~".*${id}.*"}`)).toEqual([]);
    const overview = overviewResponseSchema.parse(
      await (await overviewGET(new Request("http://localhost/api/overview"))).json(),
    );
    expect(overview.source).toBe("prometheus");
    expect(overview.handlers.filter((h) => h.service === WORKSHOP_SERVICE)).toEqual([]);
  }, 180_000);
});
