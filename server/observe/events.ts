/**
 * The in-process event log behind the chart markers (`GET /api/events`): things that happened to
 * the app and its consumers that explain a step or a spike — rebalances observed, demo fault and
 * duplicate-source toggles, replays and re-drives, silences. Bounded (the newest
 * {@link MAX_EVENTS} kept), kept on `globalThis` (Next.js evaluates modules more than once), lost
 * on restart (the restart itself is an event, read from `process_start_time_seconds`).
 */

/** Kinds of events the log records. */
export const EVENT_KINDS = ["rebalance", "fault", "source", "replay", "silence"] as const;
/** One event kind. */
export type EventKind = (typeof EVENT_KINDS)[number];

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
