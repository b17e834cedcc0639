/**
 * When an alert went pending, when it fired (or will fire): the arithmetic of Prometheus' rule
 * manager, shared by the Prometheus source, the embedded evaluator and the UI.
 *
 * Prometheus evaluates a rule group every `interval`, at timestamps `activeAt + k·interval` once the
 * condition holds (`activeAt` is the timestamp of the evaluation that first saw it). An alert turns
 * from pending to firing at the first evaluation `ts` with `ts − activeAt ≥ for`
 * (`rules/alerting.go`: `ts.Sub(a.ActiveAt) >= r.holdDuration`). So with `for: 1m` and a 25 s
 * interval it fires 75 s after going pending, not 60 s. `/api/v1/rules` gives `activeAt` only: the
 * firing start has to be computed. Isomorphic: no Node imports.
 */

/** Transition times of one alert instance, in ms since the epoch; `null` when not applicable. */
export interface AlertTimes {
  /** The evaluation that first saw the condition hold (Prometheus' `activeAt`). */
  pendingSince: number | null;
  /** The evaluation that turned it firing; `null` while pending or inactive. */
  firingSince: number | null;
  /** While pending: the evaluation at which it will fire if the condition keeps holding. */
  firesAt: number | null;
}

/**
 * The first evaluation at or after `activeAtMs + forMs`, evaluations being `intervalMs` apart
 * starting at `activeAtMs`. `forMs = 0` answers `activeAtMs` (fires on the evaluation that saw it).
 * An `intervalMs` of 0 or less (unknown) answers `activeAtMs + forMs`.
 */
export function firstEvaluationAtOrAfter(activeAtMs: number, forMs: number, intervalMs: number): number {
  if (!(forMs > 0)) return activeAtMs;
  if (!(intervalMs > 0)) return activeAtMs + forMs;
  return activeAtMs + Math.ceil(forMs / intervalMs) * intervalMs;
}

/**
 * Transition times of an instance in `state` that went pending at `activeAtMs` (`null`: unknown
 * or inactive), for a rule holding `forMs` and evaluated every `intervalMs`. A firing instance's
 * `firingSince` is the computed first evaluation past the hold unless `observedFiringMs` (the
 * evaluation an evaluator saw it fire, e.g. the embedded one) is given.
 */
export function alertTimes(p: {
  state: "inactive" | "pending" | "firing";
  activeAtMs: number | null;
  forMs: number;
  intervalMs: number;
  observedFiringMs?: number | null;
}): AlertTimes {
  if (p.state === "inactive" || p.activeAtMs === null || !Number.isFinite(p.activeAtMs)) {
    return { pendingSince: null, firingSince: null, firesAt: null };
  }
  const due = firstEvaluationAtOrAfter(p.activeAtMs, p.forMs, p.intervalMs);
  if (p.state === "pending") return { pendingSince: p.activeAtMs, firingSince: null, firesAt: due };
  return { pendingSince: p.activeAtMs, firingSince: p.observedFiringMs ?? due, firesAt: null };
}

/**
 * Time left until a pending alert fires, in ms, never negative: 0 means "at the next evaluation"
 * (the due evaluation is now or late). `null` when `firesAtMs` is unknown.
 */
export function timeToFireMs(firesAtMs: number | null, nowMs: number): number | null {
  if (firesAtMs === null || !Number.isFinite(firesAtMs)) return null;
  return Math.max(0, firesAtMs - nowMs);
}

/** ISO text of a ms timestamp, `null` stays `null` (the API's date format). */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
