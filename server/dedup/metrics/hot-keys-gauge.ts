/**
 * The hot-UUID gauges (names/dedup `HOT_UUID_METRICS`): each process exports the top
 * {@link HOT_UUID_TOP_K} of its board's merged table per handler, so the dashboard can add every
 * replica of every process up in Prometheus (`sum by (uuid)`), which an in-process board cannot.
 * The gauges are rebuilt at each scrape: a UUID that left the top-k leaves the gauge, so the
 * series stay bounded (k per handler).
 */
import { Gauge, type Registry } from "prom-client";
import { HOT_UUID_METRICS, HOT_UUID_TOP_K, LABEL } from "../../../names/dedup";
import { hotKeysBoard, type HotKeysBoard } from "./hot-keys-board";
import { HotKeys } from "./hot-keys";
import type { HotKeyTable } from "./hot-key-sketch";

/**
 * The services each registry exports hot UUIDs of, with their board (one gauge pair per registry;
 * on `globalThis`: Next.js evaluates modules more than once, and the registered gauges must read
 * the one map every copy of this module writes).
 */
function exportedServices(): WeakMap<Registry, Map<string, HotKeysBoard>> {
  const g = globalThis as typeof globalThis & { __dedupHotUuidExports?: WeakMap<Registry, Map<string, HotKeysBoard>> };
  g.__dedupHotUuidExports ??= new WeakMap();
  return g.__dedupHotUuidExports;
}

/**
 * How many copies a UUID missing from the first `k` rows may have had, and how much a listed count
 * may be over: the largest listed error, the next row's count, and `total / capacity` once the
 * table is full (a UUID below it may have been evicted).
 */
export function hotUuidErrorBound(t: HotKeyTable, k = HOT_UUID_TOP_K): number {
  const listed = t.keys.slice(0, k);
  return Math.max(
    0,
    ...listed.map((x) => x.error),
    t.keys[k]?.count ?? 0,
    t.keys.length >= t.capacity ? Math.ceil(t.total / t.capacity) : 0,
  );
}

/**
 * Exports `service`'s hot UUIDs on `registry` from `board` (the Deduplicator calls it with its
 * registry; several Deduplicators of one service share the one pair of gauges).
 */
export function exportHotUuids(registry: Registry, service: string, board: HotKeysBoard): void {
  const all = exportedServices();
  let services = all.get(registry);
  if (!services) {
    services = new Map();
    all.set(registry, services);
    registerGauges(registry, services);
  }
  services.set(service, board);
}

/** Each service's handlers' tables, read at scrape (each gauge's collect reads them: their order is the registry's). */
function tables(services: ReadonlyMap<string, HotKeysBoard>): Array<{ service: string; table: HotKeyTable }> {
  const out: Array<{ service: string; table: HotKeyTable }> = [];
  for (const [service, b] of services) {
    for (const handler of new Set(b.sketches(service).flatMap((h) => h.handlers()))) {
      const table = b.top(service, handler);
      if (table) out.push({ service, table });
    }
  }
  return out;
}

function registerGauges(registry: Registry, services: ReadonlyMap<string, HotKeysBoard>): void {
  const copies = new Gauge({
    name: HOT_UUID_METRICS.copies,
    help: `Swallowed copies of each of a handler's top ${HOT_UUID_TOP_K} UUIDs over the current and the previous window (an upper bound; this process's replicas merged)`,
    labelNames: [LABEL.service, LABEL.handler, LABEL.topic, "uuid"],
    registers: [],
    collect() {
      this.reset();
      for (const { service, table } of tables(services)) {
        for (const k of table.keys.slice(0, HOT_UUID_TOP_K))
          this.set({ service, handler: table.handler, topic: k.topic, uuid: k.uuid }, k.count);
      }
    },
  });
  const bound = new Gauge({
    name: HOT_UUID_METRICS.errorBound,
    help: "Copies a UUID missing from dedup_hot_uuid_copies may have had, and how much a listed count may be over",
    labelNames: [LABEL.service, LABEL.handler],
    registers: [],
    collect() {
      this.reset();
      for (const { service, table } of tables(services))
        this.set({ service, handler: table.handler }, hotUuidErrorBound(table));
    },
  });
  // A registry that already has them (another copy of this module) keeps its own.
  if (!registry.getSingleMetric(HOT_UUID_METRICS.copies)) registry.registerMetric(copies);
  if (!registry.getSingleMetric(HOT_UUID_METRICS.errorBound)) registry.registerMetric(bound);
}

/**
 * A Deduplicator's own sketch for `service`, on `board` (the process's board when undefined; none
 * when null), the board's top UUIDs exported on `registry` when one is given.
 */
export function deduplicatorHotKeys(
  board: HotKeysBoard | null | undefined,
  service: string,
  registry: Registry | undefined,
): HotKeys | null {
  const b = board === undefined ? hotKeysBoard() : board;
  const own = b ? b.add(service, new HotKeys()) : null;
  if (b && registry) exportHotUuids(registry, service, b);
  return own;
}
