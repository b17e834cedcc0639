/**
 * The first error of a kind reaches the alert and the DLQ panel, end to end on
 * real Kafka, Redis and a Prometheus of its own: the demo consumer runs on a random service and
 * topic, its registry is served over HTTP, and a private Prometheus (Debian's 2.42, random port)
 * scrapes it and evaluates the project's rule file every {@link INTERVAL_S} s. ONE record without
 * `_watermill_message_uuid` is published. Within 3 scrape intervals of the consumer counting it,
 * `increase(deduplication_errors_total{reason="marshal"}[5m]) > 0`, `ALERTS{alertname="DedupRedisErrors"}`
 * exists (with the publisher's text, not Redis'), and the "DLQ by reason" panel's query has a rate.
 *
 * **This needs every counter series at 0 from start-up** (server/dedup/metrics/metrics.ts,
 * server/demo/demo-lifecycle.ts): a series born at its first event is first scraped at 1 and
 * `increase`/`rate` read 0 — the test fails on exactly that.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERT_NAMES } from "@/lib/thresholds";
import { METRIC_NAMES } from "@/names/dedup";
import { dedupMetrics } from "@/server/dedup";
import { PROMQL } from "@/lib/named-queries";
import { startDemoOnKafka } from "@/server/testing/demo-on-kafka";
import { promAlerts, promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";

const RULES = fileURLToPath(new URL("./rules/dedup.yml", import.meta.url));
/** Scrape and evaluation interval of the test's Prometheus. */
const INTERVAL_S = 2;
const BUDGET_MS = 3 * INTERVAL_S * 1000;

const own = startDemoOnKafka("firsterr");
const { service, topic, registry } = own;
let app: Server;
let prom: OwnPrometheus;

const query = (q: string) => promQuery(prom.url, q);

/** Polls `probe` every 100 ms until it answers true; returns the time it took, or throws after `ms`. */
async function within(what: string, ms: number, probe: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - t0;
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const marshalCount = async () =>
  (await dedupMetrics(registry).errors.get()).values.find(
    (v) => v.labels.service === service && v.labels.reason === "marshal",
  )?.value ?? 0;

beforeAll(async () => {
  app = createServer((_req, res) => {
    void registry.metrics().then((body) => {
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(body);
    });
  });
  await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${(app.address() as AddressInfo).port}`],
    ruleFiles: [RULES],
    intervalSec: INTERVAL_S,
  });
  // The app is up and scraped: two scrapes, so a series present from start-up has its baseline.
  await within("two scrapes of the app", 30_000, async () => {
    const up = await query(`count_over_time(up{job="app"}[1m])`);
    return (up[0]?.value ?? 0) >= 2;
  });
}, 90_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise((r) => (app ? app.close(r) : r(undefined)));
}, 60_000);

describe("the first error on real Kafka + Redis + Prometheus", () => {
  it("ONE record without a UUID: within 3 scrape intervals the marshal increase, the DedupRedisErrors alert (publisher text) and the DLQ panel's rate", async () => {
    await own.producer.send({ topic, messages: [{ value: "{}", headers: { "Event-Type": "review.created" } }] });
    await within("the consumer counts the marshal error", 30_000, async () => (await marshalCount()) === 1);

    const sel = `service="${service}"`;
    const tErr = await within(
      "increase(marshal) > 0",
      BUDGET_MS,
      async () => (await query(`increase(${METRIC_NAMES.errors}{${sel},reason="marshal"}[5m]) > 0`)).length === 1,
    );
    const tAlert = await within(
      "ALERTS{DedupRedisErrors}",
      BUDGET_MS,
      async () => (await query(`ALERTS{alertname="${ALERT_NAMES.redisErrors}",${sel},reason="marshal"}`)).length === 1,
    );
    const dlq = PROMQL.dlq_rate;
    const tDlq = await within("DLQ by reason > 0", BUDGET_MS, async () =>
      (await query(dlq)).some((s) => s.metric.service === service && s.value > 0),
    );
    console.log(
      `first marshal error seen by Prometheus after ${tErr} ms, ALERTS after +${tAlert} ms, DLQ rate after +${tDlq} ms (interval ${INTERVAL_S} s)`,
    );

    // The alert says what happened: a publisher's record in the DLQ, not a Redis incident.
    const mine = (await promAlerts(prom.url)).find(
      (a) => a.labels.alertname === ALERT_NAMES.redisErrors && a.labels.service === service,
    );
    expect(mine?.labels.reason).toBe("marshal");
    expect(mine?.annotations.summary).toMatch(/publisher bug, sent to the DLQ/);
    expect(mine?.annotations.description).not.toMatch(/unchecked|Fail-open/);

    // The DLQ panel's series for this record: the handler that owns review.created, reason class marshal.
    const dlqSeries = (await query(dlq)).filter((s) => s.metric.service === service && s.value > 0);
    expect(dlqSeries.map((s) => s.metric.reason_poisoned)).toEqual(["marshal"]);
  }, 90_000);
});
