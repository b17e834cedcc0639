/**
 * A fleet whose every series the dashboard reads is a straight line in time, with its past: the
 * metrics of `server/testing/fleet.ts` plus the DLQ, duplicates-by-cause, lease, payload-conflict,
 * check-moment, event-loop, Redis command-time, consumer-info, DLQ-age, handler-info and hot-UUID series, served live at `/metrics` and also written out as the samples a scraper would have taken
 * over the last `historySec` seconds. Two metrics stores given the same history and scraping the
 * same endpoint hold the same data, so their answers to one query can be compared; the history is
 * what lets a test ask about full 5-minute rate windows without waiting five minutes (a series
 * younger than the window reads differently in Prometheus and VictoriaMetrics: docs/METRICS-STORES.md).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HOT_UUID_METRICS, METRIC_NAMES, SLOW_CHECK_SECONDS } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import {
  OBSERVE_METRIC_NAMES,
  EVENTLOOP_P99_METRIC,
  PROCESS_START_METRIC,
  CONSUMER_INFO_METRIC,
  REDIS_COMMAND_TIME_METRIC,
} from "@/names/observe";
import { handlerGroupId, KAFKA_METRIC_NAMES } from "@/names/kafka";
import { fleetExposition, labels, type Fleet, type FleetService } from "@/server/testing/fleet";

/** Share of a handler's deliveries sent to the DLQ as `non_retryable`. */
export const PARITY_DLQ_SHARE = 0.01;
/** Share of a handler's deliveries that met another consumer's lease (half that many released, a tenth lost on one handler). */
export const PARITY_LEASE_SHARE = 0.01;
/** Share of the swallowed duplicates that were redeliveries (the rest: republishes). */
export const PARITY_REDELIVERY_SHARE = 0.7;

/** Seconds between a failing service's last failed check and its last check (the check-moment gauges). */
export const PARITY_QUIET_SEC = 120;

/**
 * The fleet's metrics `elapsedSec` after its start (`startedAtSec`, Unix seconds, for the moment
 * gauges), with the DLQ, by-cause and consumer-info series.
 */
export function parityExposition(fleet: Fleet, elapsedSec: number, startedAtSec = 0): string {
  const t = Math.max(0, elapsedSec);
  const out = [fleetExposition(fleet, t).trimEnd(), `# TYPE ${METRIC_NAMES.poisoned} counter`];
  for (const h of fleet.handlers) {
    const base = { service: h.service, topic: h.topic, handler: h.handler };
    out.push(
      `${METRIC_NAMES.poisoned}${labels({ ...base, reason_poisoned: "non_retryable" })} ${h.processedPerSec * t * PARITY_DLQ_SHARE}`,
    );
    out.push(`${METRIC_NAMES.poisoned}${labels({ ...base, reason_poisoned: "handler_error" })} 0`);
  }
  out.push(`# TYPE ${METRIC_NAMES.duplicatesByCause} counter`);
  for (const h of fleet.handlers) {
    const dup = h.processedPerSec * t * h.duplicateRatio;
    const base = { service: h.service, handler: h.handler };
    out.push(
      `${METRIC_NAMES.duplicatesByCause}${labels({ ...base, cause: "redelivery" })} ${dup * PARITY_REDELIVERY_SHARE}`,
    );
    out.push(
      `${METRIC_NAMES.duplicatesByCause}${labels({ ...base, cause: "republish" })} ${dup * (1 - PARITY_REDELIVERY_SHARE)}`,
    );
  }
  // Leases: met in progress and released on every handler, a lost lease on the first handler only.
  for (const [metric, share] of [
    [METRIC_NAMES.inProgress, PARITY_LEASE_SHARE],
    [METRIC_NAMES.released, PARITY_LEASE_SHARE / 2],
    [METRIC_NAMES.leaseLost, PARITY_LEASE_SHARE / 10],
  ] as const) {
    out.push(`# TYPE ${metric} counter`);
    for (const h of fleet.handlers) {
      const n = metric === METRIC_NAMES.leaseLost && h !== fleet.handlers[0] ? 0 : h.processedPerSec * t * share;
      out.push(`${metric}${labels({ service: h.service, topic: h.topic, handler: h.handler })} ${n}`);
    }
  }
  out.push(`# TYPE ${METRIC_NAMES.payloadConflicts} counter`);
  for (const h of fleet.handlers) {
    out.push(
      `${METRIC_NAMES.payloadConflicts}${labels({ service: h.service, handler: h.handler })} ${h === fleet.handlers[0] ? h.processedPerSec * t * 0.001 : 0}`,
    );
  }
  // Fingerprints of chosen fields taken over the bytes: the first handler sets the option and sees some.
  out.push(`# TYPE ${METRIC_NAMES.fingerprintFallbacks} counter`);
  out.push(
    `${METRIC_NAMES.fingerprintFallbacks}${labels({ service: fleet.handlers[0]!.service, handler: fleet.handlers[0]!.handler })} ${fleet.handlers[0]!.processedPerSec * t * 0.0005}`,
  );
  out.push(`# TYPE ${METRIC_NAMES.unchecked} counter`);
  for (const h of fleet.handlers) {
    out.push(
      `${METRIC_NAMES.unchecked}${labels({ service: h.service, handler: h.handler, reason: "redis_conn" })} ${h === fleet.handlers[0] ? h.processedPerSec * t * 0.002 : 0}`,
    );
  }
  out.push(`# TYPE ${OBSERVE_METRIC_NAMES.memoryLost} gauge`);
  for (const h of fleet.handlers) {
    out.push(
      `${OBSERVE_METRIC_NAMES.memoryLost}${labels({ service: h.service, handler: h.handler })} ${h === fleet.handlers[0] ? 0.4 : 0}`,
    );
  }
  // Moments: every handler checks all along; a failing service's last error is PARITY_QUIET_SEC old; a slow
  // service's every check is slow (its last slow check is its last check: none after it).
  const at = startedAtSec + t;
  const moments = [
    [METRIC_NAMES.lastCheck, () => at],
    [
      METRIC_NAMES.lastError,
      (s: FleetService) =>
        s.errorsPerSec.redis_conn + s.errorsPerSec.redis_timeout > 0 ? at - PARITY_QUIET_SEC : null,
    ],
    [METRIC_NAMES.lastSlowCheck, (s: FleetService) => (s.checkSeconds > SLOW_CHECK_SECONDS ? at : null)],
  ] as const;
  for (const [metric, value] of moments) {
    out.push(`# TYPE ${metric} gauge`);
    for (const h of fleet.handlers) {
      const v = value(fleet.services.find((s) => s.service === h.service)!);
      if (v !== null) out.push(`${metric}${labels({ service: h.service, handler: h.handler })} ${v}`);
    }
  }
  out.push(`# TYPE ${EVENTLOOP_P99_METRIC} gauge`, `${EVENTLOOP_P99_METRIC} 0.012`);
  out.push(`# TYPE ${REDIS_COMMAND_TIME_METRIC} gauge`);
  out.push(
    `${REDIS_COMMAND_TIME_METRIC}${labels({ command: "evalsha" })} 12.5`,
    `${REDIS_COMMAND_TIME_METRIC}${labels({ command: "get" })} 1.5`,
  );
  out.push(`# TYPE ${CONSUMER_INFO_METRIC} gauge`);
  for (const s of fleet.services)
    out.push(`${CONSUMER_INFO_METRIC}${labels({ service: s.service, replica: "r-1" })} 1`);
  out.push(`# TYPE ${KAFKA_METRIC_NAMES.lag} gauge`);
  for (const h of fleet.handlers)
    out.push(
      `${KAFKA_METRIC_NAMES.lag}${labels({ consumergroup: handlerGroupId(h.service, h.handler), topic: h.topic, partition: "0" })} 7`,
    );
  // The first handler's group falls behind by 2 messages/s above the growth alert's floor; the others stay below it.
  out.push(`# TYPE ${KAFKA_METRIC_NAMES.lagSum} gauge`);
  for (const h of fleet.handlers)
    out.push(
      `${KAFKA_METRIC_NAMES.lagSum}${labels({ consumergroup: handlerGroupId(h.service, h.handler), topic: h.topic })} ${h === fleet.handlers[0] ? 200 + 2 * t : 7}`,
    );
  // Each consumer topic's oldest open DLQ record (the dashboard's gauge): an hour old.
  out.push(`# TYPE ${OBSERVE_METRIC_NAMES.dlqOldestOpenAge} gauge`);
  for (const topic of new Set(fleet.handlers.map((h) => h.topic)))
    out.push(`${OBSERVE_METRIC_NAMES.dlqOldestOpenAge}${labels({ topic })} 3600`);
  // Each handler's self-description and its two hottest UUIDs.
  out.push(
    `# TYPE ${HANDLER_INFO_METRIC} gauge`,
    `# TYPE ${HOT_UUID_METRICS.copies} gauge`,
    `# TYPE ${HOT_UUID_METRICS.errorBound} gauge`,
  );
  fleet.handlers.forEach((h, i) => {
    out.push(
      `${HANDLER_INFO_METRIC}${labels({ service: h.service, handler: h.handler, topic: h.topic, group: handlerGroupId(h.service, h.handler), ttl_ms: "86400000", runtime: "node", contract: "1" })} 1`,
    );
    for (const [n, copies] of [
      [1, 40 + i],
      [2, 3],
    ] as const)
      out.push(
        `${HOT_UUID_METRICS.copies}${labels({ service: h.service, handler: h.handler, topic: h.topic, uuid: `uuid-${i}-${n}` })} ${copies}`,
      );
    out.push(`${HOT_UUID_METRICS.errorBound}${labels({ service: h.service, handler: h.handler })} 1`);
  });
  out.push(`# TYPE ${PROCESS_START_METRIC} gauge`, `${PROCESS_START_METRIC} 1700000000`);
  return `${out.join("\n")}\n`;
}

/** A running parity exporter. */
export interface ParityExporter {
  /** `host:port` to scrape (path `/metrics`). */
  target: string;
  /** Unix seconds the fleet's counters started from (`historySec` before the exporter started). */
  startedAtSec: number;
  close(): Promise<void>;
}

/** Serves {@link parityExposition} on a free 127.0.0.1 port, its counters started `historySec` ago. */
export async function startParityExporter(fleet: Fleet, historySec: number): Promise<ParityExporter> {
  const startedAtSec = Math.floor(Date.now() / 1000) - historySec;
  const server: Server = createServer((_req, res) => {
    res
      .writeHead(200, { "content-type": "text/plain; version=0.0.4" })
      .end(parityExposition(fleet, Date.now() / 1000 - startedAtSec, startedAtSec));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    target: `127.0.0.1:${port}`,
    startedAtSec,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The samples a scraper (`job`, target `instance`) would hold from `fromSec` to `toSec`, one per `stepSec`. */
export interface ParityHistory {
  /** OpenMetrics, timestamps in seconds, `# EOF`: for `promtool tsdb create-blocks-from openmetrics`. */
  openMetrics: string;
  /** Prometheus text with timestamps in milliseconds: for VictoriaMetrics' `/api/v1/import/prometheus`. */
  promText: string;
}

/**
 * The fleet's past as scraped samples. Every sample carries the labels a scrape adds (`job`,
 * `instance`), so the stores continue these very series when they scrape the live endpoint.
 */
export function parityHistory(
  fleet: Fleet,
  o: { job: string; instance: string; startedAtSec: number; fromSec: number; toSec: number; stepSec: number },
): ParityHistory {
  // Series by series, each in time order: the order promtool's block writer needs.
  const series = new Map<string, Array<[number, string]>>();
  for (let ts = o.fromSec; ts <= o.toSec; ts += o.stepSec) {
    for (const line of parityExposition(fleet, ts - o.startedAtSec, o.startedAtSec).split("\n")) {
      if (!line || line.startsWith("#")) continue;
      const [name, value] = line.split(" ") as [string, string];
      const target = `job="${o.job}",instance="${o.instance}"`;
      const key = name.includes("{") ? name.replace("{", `{${target},`) : `${name}{${target}}`;
      let points = series.get(key);
      if (!points) series.set(key, (points = []));
      points.push([ts, value]);
    }
  }
  const om: string[] = [];
  const text: string[] = [];
  for (const [key, points] of series) {
    for (const [ts, v] of points) {
      om.push(`${key} ${v} ${ts}`);
      text.push(`${key} ${v} ${ts * 1000}`);
    }
  }
  om.push("# EOF");
  return { openMetrics: `${om.join("\n")}\n`, promText: `${text.join("\n")}\n` };
}
