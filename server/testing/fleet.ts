/**
 * A fleet fixture: the four spec §7 metrics and the handler-time histogram for N services × M handlers, with chosen duplicate
 * ratios, error rates and check latencies, as Prometheus text exposition. Counters are rate × time
 * since `startedAt`, so every scrape is monotonic and `rate()` over any window returns the chosen
 * rates; nothing is random after the fleet is built, so a test can assert what the dashboard shows.
 *
 * Served by `scripts/demo-fleet.ts` (`npm run demo:fleet` starts it with its own Prometheus and
 * the app). Used by the fleet tests to check the overview against a fleet whose truth is known.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HANDLER_TIME_BUCKETS, CHECK_DURATION_BUCKETS } from "@/server/dedup";
import { METRIC_NAMES } from "@/names/dedup";

/** One handler of the fleet. */
export interface FleetHandler {
  service: string;
  handler: string;
  topic: string;
  /** Deliveries per second (all results). */
  processedPerSec: number;
  /** Share of deliveries swallowed as repeats, 0–1. */
  duplicateRatio: number;
  /** Share of deliveries that ended with an error, 0–1. */
  errorRatio: number;
  /** How long each attempt of the handler takes, seconds (`handler_execution_time_seconds`). */
  handlerSeconds: number;
}

/** One service of the fleet (shares the latency histogram and the error counter, spec §7). */
export interface FleetService {
  service: string;
  /** Check latency every observation takes, seconds (puts the p99 where the test wants it). */
  checkSeconds: number;
  /** `deduplication_errors_total` per second, by reason. */
  errorsPerSec: { redis_timeout: number; redis_conn: number; marshal: number };
}

/** A whole fleet. */
export interface Fleet {
  services: FleetService[];
  handlers: FleetHandler[];
}

/** Options of {@link buildFleet}. */
export interface FleetOptions {
  /** @default 20 */
  services?: number;
  /** Handlers per service. @default 10 */
  handlersPerService?: number;
  /** Handlers (by `service/handler`) with a duplicate ratio over the 10 % alert line. @default ["svc-03/h-02", "svc-11/h-07"] */
  hot?: string[];
  /** Services whose check p99 is over the 50 ms line. @default ["svc-07"] */
  slow?: string[];
  /** Services with Redis errors. @default ["svc-15"] */
  failing?: string[];
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * A deterministic fleet: handler `h-MM` of service `svc-NN` processes 2–20 msgs/s with a
 * background duplicate ratio of 0.1–0.9 % (the spec's "normal < 1 %"), except the `hot` handlers
 * (25 %); `slow` services answer checks in 80 ms; `failing` services count 0.5 `redis_timeout`/s.
 */
export function buildFleet(o: FleetOptions = {}): Fleet {
  const nS = o.services ?? 20;
  const nH = o.handlersPerService ?? 10;
  const hot = new Set(o.hot ?? ["svc-03/h-02", "svc-11/h-07"]);
  const slow = new Set(o.slow ?? ["svc-07"]);
  const failing = new Set(o.failing ?? ["svc-15"]);
  const services: FleetService[] = [];
  const handlers: FleetHandler[] = [];
  for (let s = 1; s <= nS; s++) {
    const service = `svc-${pad(s)}`;
    services.push({
      service,
      checkSeconds: slow.has(service) ? 0.08 : 0.0004 + (s % 5) * 0.0003,
      errorsPerSec: { redis_timeout: failing.has(service) ? 0.5 : 0, redis_conn: 0, marshal: 0 },
    });
    for (let h = 1; h <= nH; h++) {
      const handler = `h-${pad(h)}`;
      handlers.push({
        service,
        handler,
        topic: `${service}.events`,
        processedPerSec: 2 + ((s * 7 + h * 3) % 19),
        duplicateRatio: hot.has(`${service}/${handler}`) ? 0.25 : 0.001 + ((s + h) % 9) * 0.001,
        errorRatio: 0,
        handlerSeconds: 0.004 + (h % 4) * 0.03,
      });
    }
  }
  return { services, handlers };
}

/** A label set in Prometheus text format: `{a="1",b="2"}`. */
export const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",")}}`;

/** The fleet's metrics `elapsedSec` after its start, in Prometheus text format 0.0.4. */
export function fleetExposition(fleet: Fleet, elapsedSec: number): string {
  const t = Math.max(0, elapsedSec);
  const out: string[] = [];
  out.push(`# TYPE ${METRIC_NAMES.processed} counter`);
  for (const h of fleet.handlers) {
    const base = { service: h.service, topic: h.topic, handler: h.handler };
    const total = h.processedPerSec * t;
    const dup = total * h.duplicateRatio;
    const err = total * h.errorRatio;
    out.push(`${METRIC_NAMES.processed}${labels({ ...base, result: "deduplicated" })} ${dup}`);
    out.push(`${METRIC_NAMES.processed}${labels({ ...base, result: "error" })} ${err}`);
    out.push(`${METRIC_NAMES.processed}${labels({ ...base, result: "success" })} ${total - dup - err}`);
  }
  out.push(`# TYPE ${METRIC_NAMES.deduplicated} counter`);
  for (const h of fleet.handlers) {
    out.push(
      `${METRIC_NAMES.deduplicated}${labels({ service: h.service, topic: h.topic, handler: h.handler })} ${h.processedPerSec * t * h.duplicateRatio}`,
    );
  }
  out.push(`# TYPE ${METRIC_NAMES.errors} counter`);
  for (const s of fleet.services) {
    for (const [reason, perSec] of Object.entries(s.errorsPerSec))
      out.push(`${METRIC_NAMES.errors}${labels({ service: s.service, reason })} ${perSec * t}`);
  }
  out.push(`# TYPE ${METRIC_NAMES.checkDuration} histogram`);
  for (const s of fleet.services) {
    // One check per delivery of the service's handlers, each taking `checkSeconds`.
    const count = fleet.handlers.filter((h) => h.service === s.service).reduce((a, h) => a + h.processedPerSec * t, 0);
    for (const le of CHECK_DURATION_BUCKETS)
      out.push(
        `${METRIC_NAMES.checkDuration}_bucket${labels({ service: s.service, le: String(le) })} ${s.checkSeconds <= le ? count : 0}`,
      );
    out.push(`${METRIC_NAMES.checkDuration}_bucket${labels({ service: s.service, le: "+Inf" })} ${count}`);
    out.push(`${METRIC_NAMES.checkDuration}_sum${labels({ service: s.service })} ${count * s.checkSeconds}`);
    out.push(`${METRIC_NAMES.checkDuration}_count${labels({ service: s.service })} ${count}`);
  }
  out.push(`# TYPE ${METRIC_NAMES.handlerExecutionTime} histogram`);
  for (const h of fleet.handlers) {
    // One attempt per delivery that was not swallowed; the failed ones count as success="false".
    const total = h.processedPerSec * t * (1 - h.duplicateRatio);
    const failed = h.processedPerSec * t * h.errorRatio;
    for (const [success, count] of [
      ["true", total - failed],
      ["false", failed],
    ] as const) {
      const l = { service: h.service, handler: h.handler, success };
      for (const le of HANDLER_TIME_BUCKETS)
        out.push(
          `${METRIC_NAMES.handlerExecutionTime}_bucket${labels({ ...l, le: String(le) })} ${h.handlerSeconds <= le ? count : 0}`,
        );
      out.push(`${METRIC_NAMES.handlerExecutionTime}_bucket${labels({ ...l, le: "+Inf" })} ${count}`);
      out.push(`${METRIC_NAMES.handlerExecutionTime}_sum${labels(l)} ${count * h.handlerSeconds}`);
      out.push(`${METRIC_NAMES.handlerExecutionTime}_count${labels(l)} ${count}`);
    }
  }
  return out.join("\n") + "\n";
}

/** A running exporter. */
export interface FleetExporter {
  url: string;
  fleet: Fleet;
  close(): Promise<void>;
}

/** Serves `fleet` at `http://127.0.0.1:<port>/metrics` (port 0 = a free one). */
export async function startFleetExporter(fleet: Fleet, port = 0): Promise<FleetExporter> {
  const startedAt = Date.now();
  const server: Server = createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end("only /metrics\n");
      return;
    }
    res
      .writeHead(200, { "content-type": "text/plain; version=0.0.4" })
      .end(fleetExposition(fleet, (Date.now() - startedAt) / 1000));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/metrics`,
    fleet,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
