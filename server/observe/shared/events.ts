/**
 * The event log behind the chart markers (`GET /api/events`): things that happened to the app's
 * consumers that explain a step or a spike and that nobody did through the app — rebalances
 * observed, notifications received (actions done through the app or the CLI are markers from the
 * audit trail, server/audit/markers.ts). With `DATABASE_URL` it lives in PostgreSQL
 * (server/replicas/shared-state.ts), so every replica shows the same markers and they outlive a
 * restart; an event the database refused is kept in this process and shown beside the database's.
 * Without it: in process memory, bounded (the newest {@link MAX_EVENTS}), kept on `globalThis`
 * (Next.js evaluates modules more than once), lost on restart (the restart itself is an event,
 * read from `process_start_time_seconds`).
 */

import { Gauge, type Registry } from "prom-client";
import type { MarkerKind } from "@/lib/api/events";
import { sharedState } from "@/server/replicas/shared-state";
import { PROCESS_START_METRIC } from "@/names/observe";

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

/**
 * Records an event now (or at `at`): in the shared database when there is one, else (or when it
 * refuses) in this process. Never rejects; callers need not wait.
 */
export async function recordEvent(
  kind: EventKind,
  title: string,
  labels: Record<string, string> = {},
  at = Date.now(),
): Promise<void> {
  const e: AppEvent = { at, kind, title, labels };
  const shared = sharedState();
  if (shared) {
    try {
      await shared.appendEvent(e);
      return;
    } catch {
      // Kept here instead: this replica still shows it, the others do not.
    }
  }
  const l = log();
  l.push(e);
  if (l.length > MAX_EVENTS) l.splice(0, l.length - MAX_EVENTS);
}

/**
 * Events with `from <= at <= to` (epoch ms), oldest first: the shared database's (the newest
 * {@link MAX_EVENTS}) and those kept in this process. **Rejects when the database does not
 * answer** (the caller says the markers are partial).
 */
export async function eventsBetween(from: number, to: number): Promise<AppEvent[]> {
  const local = log().filter((e) => e.at >= from && e.at <= to);
  const shared = sharedState();
  if (!shared) return local;
  const rows = await shared.eventsBetween(from, to, MAX_EVENTS);
  const fromDb = rows.map((r) => ({ ...r, kind: r.kind as EventKind }));
  return local.length ? [...fromDb, ...local].sort((a, b) => a.at - b.at) : fromDb;
}

/**
 * Exports `process_start_time_seconds` (prom-client's default metric name, without the other
 * default metrics) on `registry`: each restart of a replica is a new value, a chart marker.
 */
export function registerProcessStart(registry: Registry, startMs = Date.now() - process.uptime() * 1000): void {
  if (registry.getSingleMetric(PROCESS_START_METRIC)) return;
  new Gauge({
    name: PROCESS_START_METRIC,
    help: "Start time of the process since unix epoch in seconds.",
    registers: [registry],
  }).set(Math.round(startMs / 10) / 100);
}
