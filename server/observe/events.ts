/**
 * The in-process event log behind the chart markers (`GET /api/events`): things that happened to
 * the app's consumers that explain a step or a spike and that nobody did through the app —
 * rebalances observed (actions done through the app or the CLI are markers from the audit trail,
 * server/audit/markers.ts). Bounded (the newest
 * {@link MAX_EVENTS} kept), kept on `globalThis` (Next.js evaluates modules more than once), lost
 * on restart (the restart itself is an event, read from `process_start_time_seconds`).
 */

import { Gauge, type Registry } from "prom-client";
import type { MarkerKind } from "@/lib/api/events";
import { PROCESS_START_METRIC } from "./metrics/queries";

/** Kinds of events the log records (alerts and restarts come from Prometheus' series). */
export type EventKind = Exclude<MarkerKind, "alert" | "restart">;

/** One recorded event. */
export interface AppEvent {
  /** Epoch milliseconds. */
  at: number;
  kind: EventKind;
  /** One line: what happened ("rebalance of notification.on-page-viewed: 2 → 3 members"). */
  title: string;
  /** The labels it concerns (service, handler, consumergroup…), for filtering per page. */
  labels: Record<string, string>;
}

/** Most events kept. */
export const MAX_EVENTS = 2000;

type G = typeof globalThis & { __dedupHealthEvents?: AppEvent[] };

function log(): AppEvent[] {
  const g = globalThis as G;
  g.__dedupHealthEvents ??= [];
  return g.__dedupHealthEvents;
}

/** Records an event now (or at `at`). */
export function recordEvent(kind: EventKind, title: string, labels: Record<string, string> = {}, at = Date.now()): void {
  const l = log();
  l.push({ at, kind, title, labels });
  if (l.length > MAX_EVENTS) l.splice(0, l.length - MAX_EVENTS);
}

/** Events with `from <= at <= to` (epoch ms), oldest first. */
export function eventsBetween(from: number, to: number): AppEvent[] {
  return log().filter((e) => e.at >= from && e.at <= to);
}

/**
 * Exports `process_start_time_seconds` (prom-client's default metric name, without the other
 * default metrics) on `registry`: each restart of a replica is a new value, a chart marker.
 */
export function registerProcessStart(registry: Registry, startMs = Date.now() - process.uptime() * 1000): void {
  if (registry.getSingleMetric(PROCESS_START_METRIC)) return;
  new Gauge({ name: PROCESS_START_METRIC, help: "Start time of the process since unix epoch in seconds.", registers: [registry] }).set(Math.round(startMs / 10) / 100);
}
