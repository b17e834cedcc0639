"use client";

import { useEffect, useState } from "react";
import type { AlertsUnknown } from "@/lib/api/alerts";
import type { AlertStateName } from "@/lib/api/common";
import { timeToFireMs } from "@/lib/alert-transitions";
import { formatDurationMs, formatSince } from "@/lib/format";
import { formatInstant } from "@/lib/clock-time";

const TONE: Record<AlertStateName, string> = {
  inactive:
    "bg-emerald-100 text-emerald-900 ring-emerald-300 dark:bg-emerald-900/40 dark:text-emerald-200 dark:ring-emerald-800",
  pending: "bg-amber-100 text-amber-900 ring-amber-300 dark:bg-amber-900/40 dark:text-amber-200 dark:ring-amber-800",
  firing: "bg-red-100 text-red-900 ring-red-300 dark:bg-red-900/50 dark:text-red-100 dark:ring-red-800",
};

/** Props of {@link AlertBadge}: the state and the transition times of lib/alert-transitions (ISO). */
export interface AlertBadgeProps {
  state: AlertStateName;
  /** Pending since (Prometheus' `activeAt`). */
  since?: string | null;
  /** Firing since: the first evaluation at or after `activeAt + for`. */
  firingSince?: string | null;
  /** While pending: when it fires if the condition keeps holding. */
  firesAt?: string | null;
  /** The answer's time (ms); the countdown runs on from it between two answers. */
  now?: number;
  /**
   * Set when the rule states cannot be read now: the badge says "unknown (Prometheus unavailable
   * since …)" and shows `state` as the last known one, with its time — never a green "inactive".
   */
  unknown?: AlertsUnknown | null;
}

const UNKNOWN_TONE =
  "bg-slate-100 text-slate-800 ring-slate-300 dark:bg-slate-800 dark:text-slate-200 dark:ring-slate-600";

/** Local clock time of an ISO instant. */
function clockOf(iso: string): string {
  return formatInstant(iso);
}

/** The text of an unknown badge: since when the states cannot be read, and the last known one. */
export function unknownText(state: AlertStateName, unknown: AlertsUnknown): { head: string; last: string } {
  const head = `unknown (Prometheus unavailable${unknown.since ? ` since ${clockOf(unknown.since)}` : ""})`;
  const last = unknown.lastKnownAt ? `last known: ${state} at ${clockOf(unknown.lastKnownAt)}` : "no state read yet";
  return { head, last };
}

function UnknownBadge({ state, unknown }: { state: AlertStateName; unknown: AlertsUnknown }) {
  const { head, last } = unknownText(state, unknown);
  return (
    <span
      data-testid="alert-state"
      data-state="unknown"
      data-last-state={unknown.lastKnownAt ? state : undefined}
      title={`${head}; ${last}`}
      suppressHydrationWarning
      className={`inline-flex items-center gap-1 rounded px-2 py-0.5 text-xs font-medium ring-1 ${UNKNOWN_TONE}`}
    >
      <span aria-hidden>?</span>
      {head}
      <span className="font-normal opacity-80" suppressHydrationWarning>
        · {last}
      </span>
    </span>
  );
}

/** Milliseconds since the component got `now`, ticking every second while `on` (the countdown). */
function useElapsed(now: number | undefined, on: boolean): number {
  const [t, setT] = useState(() => ({ now, start: Date.now(), elapsed: 0 }));
  if (t.now !== now) setT({ now, start: Date.now(), elapsed: 0 });
  useEffect(() => {
    if (!on) return;
    const id = setInterval(() => setT((x) => ({ ...x, elapsed: Date.now() - x.start })), 1000);
    return () => clearInterval(id);
  }, [on]);
  return t.now === now ? t.elapsed : 0;
}

/**
 * The instant a badge shows, `elapsed` ms after it got `now`: the answer's time run on by the
 * elapsed time, or — without an answer time — the wall clock itself (adding the elapsed time to a
 * clock that already moved ran the countdown at double speed on a page left open).
 */
export function badgeInstant(now: number | undefined, elapsed: number, wall: number = Date.now()): number {
  return now === undefined ? wall : now + elapsed;
}

/**
 * Alert state as Prometheus names it, with its real transition times: "pending since …, fires in …"
 * (a countdown to the evaluation that turns it firing) and "firing since …" (when it fired, not when
 * it went pending). Colour is never the only cue: the word is shown.
 */
export function AlertBadge({ unknown, ...known }: AlertBadgeProps) {
  return unknown ? <UnknownBadge state={known.state} unknown={unknown} /> : <KnownBadge {...known} />;
}

function KnownBadge({ state, since, firingSince, firesAt, now }: Omit<AlertBadgeProps, "unknown">) {
  const countdown = state === "pending" && !!firesAt;
  const elapsed = useElapsed(now, countdown);
  const at = badgeInstant(now, elapsed);
  const left = countdown ? timeToFireMs(Date.parse(firesAt), at) : null;
  let detail: string | null = null;
  let title: string | undefined;
  if (state === "pending" && since) {
    detail = `since ${formatSince(since, at)}`;
    if (left !== null) detail += left > 0 ? `, fires in ${formatDurationMs(left)}` : ", fires at the next evaluation";
    title = `pending since ${formatInstant(since)}${firesAt ? `; fires at ${formatInstant(firesAt)} if the condition holds` : ""}`;
  } else if (state === "firing" && (firingSince ?? since)) {
    const from = (firingSince ?? since)!;
    detail = `since ${formatSince(from, at)}`;
    title = `firing since ${formatInstant(from)}${since ? `; pending since ${formatInstant(since)}` : ""}`;
  }
  return (
    <span
      data-testid="alert-state"
      data-state={state}
      title={title}
      // Server-painted pages (app/prefetch-queries.ts): the clock moves and the zone may differ between the server's render and hydration.
      suppressHydrationWarning
      className={`inline-flex items-center gap-1 rounded px-2 py-0.5 text-xs font-medium ring-1 ${TONE[state]}`}
    >
      <span aria-hidden>{state === "firing" ? "●" : state === "pending" ? "◐" : "○"}</span>
      {state}
      {detail ? (
        <span
          className="font-normal opacity-80"
          data-testid={countdown ? "alert-countdown" : undefined}
          suppressHydrationWarning
        >
          {detail}
        </span>
      ) : null}
    </span>
  );
}
