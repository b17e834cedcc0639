/**
 * The embedded evaluation of the signal queries (./signal-queries) over the app's own registry: in
 * embedded mode this process is the one consumer, so what it registered is what it exports.
 */
import { HOT_UUID_METRICS } from "@/names/dedup";
import { RUNTIME_SIGNALS } from "@/names/runtime";
import { OPTIONAL_SIGNALS } from "@/lib/signals";
import { latest, type Snapshot } from "./local-promql";
import type { Sample } from "./source";

const OPTIONAL = new Set<string>(Object.values(OPTIONAL_SIGNALS));

/** `exported_signals`: one sample per service and optional metric of the latest snapshot. */
export function exportedSignalsAt(snaps: readonly Snapshot[], t: number): Sample[] {
  const seen = new Map<string, Sample>();
  for (const v of latest(snaps, t)?.series.values() ?? []) {
    if (!OPTIONAL.has(v.name) || v.labels.service === undefined) continue;
    seen.set(`${v.labels.service}\u0000${v.name}`, { labels: { service: v.labels.service, metric: v.name }, value: 1 });
  }
  return [...seen.values()];
}

/** `runtime_latency`: Node's event-loop p99 of this process, for every service it exports core series of. */
export function runtimeLatencyAt(snaps: readonly Snapshot[], t: number): Sample[] {
  const last = latest(snaps, t);
  if (!last) return [];
  const node = RUNTIME_SIGNALS.nodeEventLoop;
  const lag = [...last.series.values()].find((v) => v.name === node.metric)?.value;
  if (lag === undefined) return [];
  const services = new Set(
    [...last.series.values()].flatMap((v) => (v.labels.service !== undefined ? [v.labels.service] : [])),
  );
  return [...services].map((service) => ({
    labels: { service, runtime: node.runtime, metric: node.metric },
    value: lag,
  }));
}

/** `hot_uuids` / `hot_uuid_error_bound`: this process's gauges (one process: the sums are its values). */
export function hotUuidsAt(which: keyof typeof HOT_UUID_METRICS) {
  const labelsOf = (l: Record<string, string>): Record<string, string> =>
    which === "copies"
      ? { service: l.service ?? "", handler: l.handler ?? "", topic: l.topic ?? "", uuid: l.uuid ?? "" }
      : { service: l.service ?? "", handler: l.handler ?? "", instance: "local", job: "local" };
  return (snaps: readonly Snapshot[], t: number): Sample[] =>
    [...(latest(snaps, t)?.series.values() ?? [])]
      .filter((v) => v.name === HOT_UUID_METRICS[which])
      .map((v) => ({ labels: labelsOf(v.labels), value: v.value }));
}
