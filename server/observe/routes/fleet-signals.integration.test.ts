/**
 * What the dashboard knows of a fleet, read from a real Prometheus of the test's own that scrapes
 * three processes: two of ours (each its own registry, hot-key board and Deduplicator over one
 * shared store, as two worker processes run them) and a service that exports only the design
 * note's four metrics (server/testing/note-exporter). The hot UUIDs of the two processes are
 * merged by UUID (a storm sent to one and its copies to the other is one row with the sum); the
 * note's service gets "not measured" with the metric it would need wherever a figure needs a signal
 * it does not export, and "no scrape since …" with a gap in its lines once its exporter stops; a
 * service's restart markers come from its own processes only, never from a dashboard's start.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deduplicator, HotKeysBoard, MemoryRepository, newMessage, type Middleware } from "@/server/dedup";
import { HOT_UUID_METRICS, METRIC_NAMES } from "@/names/dedup";
import { RUNTIME_SIGNAL_METRICS } from "@/names/runtime";
import { createObserveContext } from "../context";
import { getEvents } from "./events";
import { registerProcessStart } from "../shared/events";
import { getHotKeys } from "./hot-keys";
import { PrometheusSource } from "../metrics/prometheus";
import { getOverview } from "./overview";
import { getSeries } from "./series";
import { listenOnFreePort, closeServer } from "@/server/testing/net";
import { startNoteExporter, type NoteExporter } from "@/server/testing/note-exporter";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";

const tag = randomBytes(4).toString("hex");
const OURS = `fleet-${tag}`;
const NOTE = `note-${tag}`;
const HANDLER = "on-order";
const TOPIC = `orders-${tag}`;
const SCRAPE_SEC = 1;

let prom: OwnPrometheus;
let note: NoteExporter;
let dashboardTarget = "";
const servers: Server[] = [];
const store = new MemoryRepository();
/** One "process" of ours: its registry served on /metrics, its own board, its Deduplicator. */
const processes = [0, 1].map(() => {
  const registry = new Registry();
  const board = new HotKeysBoard();
  const run = (deduplicator({ repository: store, service: OURS, registry, hotKeys: board }) as Middleware)(
    async () => undefined,
  );
  return { registry, run };
});
const ctx = () => createObserveContext({ metrics: new PrometheusSource(prom.url), redis: null });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function deliver(p: (typeof processes)[number], uuid: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const m = newMessage(uuid, "payload");
    Object.assign(m.context, { topic: TOPIC, handler: HANDLER });
    await p.run(m);
  }
}

async function until<T>(what: string, ms: number, f: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(250);
  }
}

beforeAll(async () => {
  const targets: string[] = [];
  for (const p of processes) {
    const s = createServer(
      (_req, res) =>
        void p.registry.metrics().then((t) => res.writeHead(200, { "Content-Type": p.registry.contentType }).end(t)),
    );
    targets.push(`127.0.0.1:${await listenOnFreePort(s)}`);
    servers.push(s);
  }
  // Process A started a minute ago; a dashboard of its own (no consumer: only its start time) 30 s ago.
  registerProcessStart(processes[0]!.registry, Date.now() - 60_000);
  const dashboard = new Registry();
  registerProcessStart(dashboard, Date.now() - 30_000);
  const d = createServer(
    (_req, res) =>
      void dashboard.metrics().then((t) => res.writeHead(200, { "Content-Type": dashboard.contentType }).end(t)),
  );
  dashboardTarget = `127.0.0.1:${await listenOnFreePort(d)}`;
  servers.push(d);
  note = await startNoteExporter({ service: NOTE, handler: HANDLER, topic: TOPIC });
  prom = await startOwnPrometheus({
    targets: [...targets, dashboardTarget, note.target],
    ruleFiles: [],
    intervalSec: SCRAPE_SEC,
  });
}, 60_000);

afterAll(async () => {
  await note?.stop();
  await prom?.stop();
  for (const s of servers) await closeServer(s);
});

describe("a fleet in Prometheus", () => {
  it("hot UUIDs merged across processes: a 500-copy storm sent to one process and its copies to another is on top with the sum", async () => {
    const storm = `storm-${tag}`;
    const [a, b] = processes as [(typeof processes)[number], (typeof processes)[number]];
    // 30 other UUIDs repeated a few times on each process, so the storm is not alone in either table.
    for (let i = 0; i < 30; i++) await deliver(i % 2 ? a : b, `other-${tag}-${i}`, 4);
    await deliver(a, storm, 501); // the first run and 500 copies on process A
    await deliver(b, storm, 300); // 300 more copies on process B
    const body = await until("the storm summed over both processes", 20_000, async () => {
      const r = await getHotKeys(ctx(), { service: OURS, handler: HANDLER });
      return r.keys[0]?.uuid === storm && r.keys[0].count === 800 && r.sketches === 2 ? r : undefined;
    });
    expect(body.scope).toBe("fleet");
    expect(body.notMeasured).toBeNull();
    // Each process alone holds only its part: 500 and 300.
    const perProcess = await Promise.all(
      processes.map(
        async (p) =>
          (await p.registry.getSingleMetric(HOT_UUID_METRICS.copies)!.get()).values.find((v) => v.labels.uuid === storm)
            ?.value,
      ),
    );
    expect(perProcess).toEqual([500, 300]);
    for (const k of body.keys.slice(1)) expect(k.count).toBeLessThanOrEqual(3);
  }, 60_000);

  it("a service's restart markers are its own processes' starts, not the dashboard's", async () => {
    const events = await until("process A's restart marker", 20_000, async () => {
      const e = (await getEvents(ctx(), { range: "15m", service: OURS })).events.filter((x) => x.kind === "restart");
      return e.length > 0 ? e : undefined;
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.labels.service).toBe(OURS);
    expect(events.map((e) => e.labels.instance)).not.toContain(dashboardTarget);
  }, 30_000);

  it("a service exporting only the note's four metrics: every figure that needs another signal is 'not measured' with its metric, none reads zero", async () => {
    note.process(100, 19);
    const row = await until("the note's service in the overview with traffic", 20_000, async () => {
      const o = await getOverview(ctx(), "1h");
      const r = o.handlers.find((h) => h.service === NOTE && h.handler === HANDLER);
      return r && r.processedRate.status === "ok" && r.processedRate.total > 0 ? r : undefined;
    });
    expect(row.scrape).toEqual({ status: "live" });
    expect(row.unchecked).toMatchObject({ status: "unknown", metric: METRIC_NAMES.unchecked });
    expect(row.signals?.byCause).toMatchObject({ status: "unknown", metric: METRIC_NAMES.duplicatesByCause });
    expect(row.signals?.payloadConflicts).toMatchObject({ status: "unknown", metric: METRIC_NAMES.payloadConflicts });
    expect(row.signals?.leases).toMatchObject({ status: "unknown", metric: METRIC_NAMES.leaseLost });
    expect(row.signals?.hotUuids).toMatchObject({ status: "unknown", metric: HOT_UUID_METRICS.errorBound });
    expect(row.latencyParts?.runtime).toMatchObject({ status: "unknown", metrics: [...RUNTIME_SIGNAL_METRICS] });
    expect(row.latencyParts?.text).toContain("not known for this runtime");
    // Ours exports them all (the same answer: decided per service, from Prometheus).
    const ours = (await getOverview(ctx(), "1h")).handlers.find((h) => h.service === OURS)!;
    expect(ours.signals?.byCause.status).toBe("ok");
    expect(ours.signals?.hotUuids.status).toBe("ok");
    expect(ours.unchecked?.status).toBe("ok");

    const hot = await getHotKeys(ctx(), { service: NOTE, handler: HANDLER });
    expect(hot.notMeasured).toMatchObject({ status: "unknown", metric: HOT_UUID_METRICS.errorBound });
    for (const metric of ["duplicates_by_cause", "payload_conflicts", "lease_events"] as const) {
      const s = await getSeries(ctx(), { metric, service: NOTE, handler: HANDLER, range: "1h" });
      expect(s.data.status, metric).toBe("unknown");
    }
  }, 60_000);

  it("its exporter stopped: 'no scrape since' within two scrapes on every figure, and a gap in its lines", async () => {
    note.process(50, 5);
    await sleep(3 * SCRAPE_SEC * 1000);
    await note.stop();
    const stoppedAt = Date.now();
    const row = await until("no scrape since", 10_000, async () => {
      const r = (await getOverview(ctx(), "1h")).handlers.find((h) => h.service === NOTE);
      return r?.scrape?.status === "down" ? r : undefined;
    });
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(2 * SCRAPE_SEC * 1000 + 2_000);
    expect(row.scrape).toMatchObject({
      status: "down",
      detail: expect.stringMatching(/^no scrape since \d\d:\d\d:\d\d UTC$/),
    });
    const detail = row.scrape?.status === "down" ? row.scrape.detail : "?";
    for (const f of [row.duplicateRatio, row.processedRate, row.checkLatency, row.errorRates])
      expect(f).toMatchObject({ status: "unavailable", detail });
    // The 5-min rate still has a value for minutes; the chart's line stops where the scrapes did.
    // (Read once the chart reaches past the stop: on a loaded machine the first reads may not yet.)
    const afterStop = (l: { points: Array<[number, number | null]> }) =>
      l.points.filter(([t]) => t > stoppedAt / 1000 + SCRAPE_SEC);
    const { s, line } = await until("the chart's points after the stop", 20_000, async () => {
      const s = await getSeries(ctx(), {
        metric: "processed_rate",
        service: NOTE,
        handler: HANDLER,
        range: "1h",
        step: 1,
      });
      const line = s.data.status === "ok" ? s.data.series.find((l) => l.labels.result === "success") : undefined;
      return line && afterStop(line).length > 0 ? { s, line } : undefined;
    });
    expect(s.scrape?.status).toBe("down");
    // Every point after the stop is a gap (null), not the 5-min rate's lingering value.
    const after = afterStop(line);
    expect(
      after.every(([, v]) => v === null),
      JSON.stringify(after),
    ).toBe(true);
    expect(line!.points.some(([, v]) => v !== null && v > 0)).toBe(true);
  }, 60_000);
});
