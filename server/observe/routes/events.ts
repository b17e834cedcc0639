/**
 * Builds `GET /api/events`: the chart markers of a range — alert transitions read from Prometheus'
 * `ALERTS` series (pending / firing / resolved per instance, at the evaluation that showed them),
 * app restarts from `process_start_time_seconds`, the in-process event log (rebalances) and the
 * recorded actions (the audit trail: demo toggles, re-drives and replays, key actions, workshop
 * runs, silences). Filtered to a service and handler; bounded to {@link MAX_MARKERS}.
 */
import { MAX_MARKERS, type ChartEvent, type EventsQuery, type EventsResponse } from "@/lib/api/events";
import { RANGE_SECONDS } from "@/lib/ranges";
import type { ObserveContext } from "../core/ports";
import { eventsBetween } from "../shared/events";
import type { RangeSeries } from "../metrics/source";
import { got } from "../shared/upstream";

/** Step of the state reads: Prometheus' evaluation interval (5 s) up to 1,000 points a range. */
function stepFor(rangeSec: number): number {
  return Math.max(5, Math.ceil(rangeSec / 1000));
}

type State = "inactive" | "pending" | "firing";

/** Whether an event with `labels` concerns the page of `q` (no label = concerns every page). */
function concerns(labels: Readonly<Record<string, string>>, q: Pick<EventsQuery, "service" | "handler">): boolean {
  if (q.service !== undefined && labels.service !== undefined && labels.service !== q.service) return false;
  if (q.handler !== undefined && labels.handler !== undefined && labels.handler !== q.handler) return false;
  return true;
}

/**
 * Transitions of every alert instance in `series` (ALERTS: one series per instance and state),
 * sampled every `stepSec` from `startSec`: pending, firing, resolved at the first sample that shows
 * them. A state already held at the range's start is not a transition.
 */
export function alertTransitions(
  series: readonly RangeSeries[],
  startSec: number,
  endSec: number,
  stepSec: number,
): ChartEvent[] {
  const byInstance = new Map<string, { labels: Record<string, string>; at: Map<number, State> }>();
  for (const s of series) {
    const { alertstate, ...labels } = s.labels;
    const key = JSON.stringify(Object.entries(labels).sort());
    const e = byInstance.get(key) ?? { labels, at: new Map<number, State>() };
    for (const [t, v] of s.points) {
      if (v === null) continue;
      if (alertstate === "firing" || !e.at.has(t)) e.at.set(t, alertstate === "firing" ? "firing" : "pending");
    }
    byInstance.set(key, e);
  }
  const out: ChartEvent[] = [];
  const first = Math.floor(startSec / stepSec) * stepSec;
  for (const { labels, at } of byInstance.values()) {
    const changes: Array<{ t: number; what: string }> = [];
    let prev: State | null = null;
    for (let t = first; t <= endSec; t += stepSec) {
      const now = at.get(t) ?? "inactive";
      if (prev !== null && now !== prev) changes.push({ t, what: now === "inactive" ? "resolved" : now });
      prev = now;
    }
    const { alertname, severity: _s, ...rest } = labels;
    const name = `${alertname ?? "alert"}{${Object.entries(rest)
      .map(([k, v]) => `${k}="${v}"`)
      .join(", ")}}`;
    for (const c of foldFlaps(changes)) {
      const title = c.flaps
        ? `${name} pending and resolved ${c.flaps} times (flapping) until ${new Date(c.until * 1000).toISOString().slice(11, 19)} UTC`
        : `${name} ${c.what}`;
      out.push({
        at: new Date(c.t * 1000).toISOString(),
        kind: "alert",
        title,
        labels: {
          ...labels,
          transition: c.flaps ? "flapping" : c.what,
          ...(c.flaps ? { flaps: String(c.flaps) } : {}),
        },
      });
    }
  }
  return out;
}

/** Pending→resolved cycles closer than this (s) to the next one belong to one flapping spell. */
export const FLAP_GAP_SEC = 300;
/** Cycles from which a spell is one marker. */
export const FLAP_MIN_CYCLES = 3;

/**
 * Folds an instance's pending→resolved cycles that follow each other within {@link FLAP_GAP_SEC}
 * (without firing) into one marker with their count: a lag rule flapping around bursts made ~30
 * markers, a solid band on the chart. A spell of fewer than {@link FLAP_MIN_CYCLES} stays as it is.
 */
export function foldFlaps(
  changes: ReadonlyArray<{ t: number; what: string }>,
): Array<{ t: number; what: string; flaps?: number; until: number }> {
  const out: Array<{ t: number; what: string; flaps?: number; until: number }> = [];
  let i = 0;
  while (i < changes.length) {
    let j = i;
    // A cycle: pending at j, resolved at j+1; the spell goes on while the next pending comes soon.
    while (
      changes[j]?.what === "pending" &&
      changes[j + 1]?.what === "resolved" &&
      (changes[j + 2] === undefined ||
        changes[j + 2]!.what !== "pending" ||
        changes[j + 2]!.t - changes[j + 1]!.t <= FLAP_GAP_SEC)
    ) {
      j += 2;
      if (changes[j]?.what !== "pending") break;
    }
    const cycles = (j - i) / 2;
    if (cycles >= FLAP_MIN_CYCLES) {
      out.push({ t: changes[i]!.t, what: "flapping", flaps: cycles, until: changes[j - 1]!.t });
      i = j;
    } else {
      out.push({ ...changes[i]!, until: changes[i]!.t });
      i++;
    }
  }
  return out;
}

/** Restarts: each distinct `process_start_time_seconds` value inside the range. */
export function restarts(series: readonly RangeSeries[], startMs: number, endMs: number): ChartEvent[] {
  const seen = new Set<string>();
  const out: ChartEvent[] = [];
  for (const s of series) {
    for (const [, v] of s.points) {
      if (v === null) continue;
      const ms = Math.round(v * 1000);
      const key = `${s.labels.instance ?? ""}@${ms}`;
      if (ms < startMs || ms > endMs || seen.has(key)) continue;
      seen.add(key);
      out.push({
        at: new Date(ms).toISOString(),
        kind: "restart",
        title: `App started${s.labels.instance ? ` (${s.labels.instance})` : ""}`,
        labels: { ...s.labels },
      });
    }
  }
  return out;
}

/** Reads the markers of recorded actions (the audit trail) between two times for a page. */
export type ActionMarkers = (q: { from: Date; to: Date; service?: string; handler?: string }) => Promise<ChartEvent[]>;

/**
 * Builds `GET /api/events`: the alert transitions and restarts from the metrics source, the
 * rebalances from the in-process log, the recorded actions from `actions` (the route passes the
 * audit trail's markers).
 */
export async function getEvents(
  ctx: ObserveContext,
  q: EventsQuery,
  nowMs = Date.now(),
  actions: ActionMarkers = async () => [],
): Promise<EventsResponse> {
  const rangeSec = RANGE_SECONDS[q.range];
  const endSec = Math.floor(nowMs / 1000);
  const startSec = endSec - rangeSec;
  const step = stepFor(rangeSec);
  const page = {
    ...(q.service !== undefined ? { service: q.service } : {}),
    ...(q.handler !== undefined ? { handler: q.handler } : {}),
  };
  const [alerts, starts, done, logged] = await Promise.all([
    got(ctx.metrics.range("alert_states", startSec, endSec, step)),
    got(ctx.metrics.range("process_start", startSec, endSec, step)),
    got(actions({ from: new Date(startSec * 1000), to: new Date(nowMs), ...page })),
    got(eventsBetween(startSec * 1000, nowMs)),
  ]);
  const partial: string[] = [];
  const all: ChartEvent[] = [];
  if (alerts.ok) all.push(...alertTransitions(alerts.value, startSec, endSec, step));
  else partial.push(`alert transitions: ${alerts.detail}`);
  if (starts.ok) all.push(...restarts(starts.value, startSec * 1000, nowMs));
  else partial.push(`restarts: ${starts.detail}`);
  if (done.ok) all.push(...done.value);
  else partial.push(`recorded actions: ${done.detail}`);
  if (logged.ok)
    for (const e of logged.value)
      all.push({ at: new Date(e.at).toISOString(), kind: e.kind, title: e.title, labels: e.labels });
  else partial.push(`rebalances and notifications: ${logged.detail}`);
  const mine = all.filter((e) => concerns(e.labels, q)).sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const events = mine.slice(-MAX_MARKERS);
  return { generatedAt: new Date(nowMs).toISOString(), events, truncated: mine.length - events.length, partial };
}
