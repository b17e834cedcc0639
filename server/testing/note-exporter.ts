/**
 * A service that is not ours, for tests: an HTTP `/metrics` that exports ONLY the design note's
 * four metrics (spec §7, names as in names/dedup: processed, deduplicated, check duration, errors)
 * for a service of its own — no by-cause counter, no payload conflicts, no unchecked counter, no
 * lease counters, no runtime signal, no hot-UUID gauge, no replica info. What a consumer in another
 * language that follows the note literally exports. Scraped by a real Prometheus
 * (./own-prometheus), it shows which figures the dashboard can know of such a service and which it
 * must call "not measured". Stopped by `stop()` (its scrapes then fail: `up == 0`), started again
 * on the same port by `start()`.
 */
import { createServer, type Server } from "node:http";
import { Counter, Histogram, Registry } from "prom-client";
import { DEDUP_ERROR_REASONS, LABEL, METRIC_NAMES, PROCESSED_RESULT, PROCESSED_RESULTS } from "@/names/dedup";
import { freePort } from "./net";

/** A running note exporter: its target (`host:port`), and what it can be told to count. */
export interface NoteExporter {
  target: string;
  service: string;
  handler: string;
  topic: string;
  /** Counts `n` messages: `dups` of them swallowed as duplicates, the rest successes; `checkSeconds` per check. */
  process(n: number, dups: number, checkSeconds?: number): void;
  /** Stops serving `/metrics` (Prometheus' scrapes fail from its next one). */
  stop(): Promise<void>;
  /** Serves `/metrics` again on the same port. */
  start(): Promise<void>;
}

/** Starts a note exporter for `service`/`handler` on `topic` on a free port of 127.0.0.1. */
export async function startNoteExporter(o: { service: string; handler: string; topic: string }): Promise<NoteExporter> {
  const registry = new Registry();
  const h = [LABEL.service, LABEL.topic, LABEL.handler] as const;
  const processed = new Counter({
    name: METRIC_NAMES.processed,
    help: "Messages processed, by result",
    labelNames: [...h, LABEL.result],
    registers: [registry],
  });
  const deduplicated = new Counter({
    name: METRIC_NAMES.deduplicated,
    help: "Messages swallowed as duplicates",
    labelNames: h,
    registers: [registry],
  });
  const check = new Histogram({
    name: METRIC_NAMES.checkDuration,
    help: "Dedup check latency (SET NX)",
    labelNames: [LABEL.service],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const errors = new Counter({
    name: METRIC_NAMES.errors,
    help: "Dedup store errors, by reason",
    labelNames: [LABEL.service, LABEL.reason],
    registers: [registry],
  });
  const labels = { service: o.service, topic: o.topic, handler: o.handler };
  // Zero series, as the note's consumer would register them at start-up.
  for (const result of PROCESSED_RESULTS) processed.inc({ ...labels, result }, 0);
  deduplicated.inc(labels, 0);
  for (const reason of DEDUP_ERROR_REASONS) errors.inc({ service: o.service, reason }, 0);
  check.observe({ service: o.service }, 0.001);

  const port = await freePort();
  let server: Server | null = null;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((req, res) => {
        if (req.url !== "/metrics") return void res.writeHead(404).end();
        void registry.metrics().then((body) => res.writeHead(200, { "content-type": registry.contentType }).end(body));
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        server = s;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.closeAllConnections();
      s.close(() => resolve());
    });
  await start();
  return {
    target: `127.0.0.1:${port}`,
    ...o,
    process(n, dups, checkSeconds = 0.002) {
      processed.inc({ ...labels, result: PROCESSED_RESULT.success }, n - dups);
      processed.inc({ ...labels, result: PROCESSED_RESULT.deduplicated }, dups);
      deduplicated.inc(labels, dups);
      for (let i = 0; i < n; i++) check.observe({ service: o.service }, checkSeconds);
    },
    stop,
    start,
  };
}
