/**
 * The demo handlers' side effect ("push sent") and its two records:
 * 1. the handler's own idempotency table (spec §5): `INSERT … ON CONFLICT (event_id) DO NOTHING`
 *    in the same transaction as the send; the push is sent only when the row is new, and a failed
 *    send rolls the row back (better not to send than to send twice);
 * 2. the push provider's ledger — the ground truth of what reached the outside world: every
 *    delivery, counted per event id, outside any handler transaction (a push cannot be taken back).
 *    A delivery for an event id already delivered is a duplicate side effect that leaked through.
 *
 * The provider honours an optional idempotency key, as real ones do (Stripe `Idempotency-Key`,
 * APNs `apns-collapse-id`, FCM message id): a call with a key already delivered for that handler
 * delivers nothing and is counted as an absorbed re-send. That closes the one window §5 leaves
 * open — a crash after the push and before the COMMIT of its record rolls the record back and the
 * redelivery calls the provider again. **Keys are kept for the ledger's lifetime**, not a provider
 * window (Stripe's is 24 h): stricter than a real provider, whose re-sends are absorbed only within
 * its window — ample for a redelivery, which comes seconds after the crash.
 *
 * PostgreSQL (`DATABASE_URL`, ./postgres-side-effects.ts) in real mode; an in-process store with the
 * same behaviour otherwise.
 */
import { Counter, type Registry } from "prom-client";

/** Metric names of the demo's side effects, written once. */
export const SIDE_EFFECT_METRICS = {
  sent: "demo_side_effects_total",
  duplicate: "demo_duplicate_side_effects_total",
  absorbed: "demo_push_resends_absorbed_total",
} as const;

/** The side-effect counters of {@link sideEffectCounters}. */
export interface SideEffectCounters {
  sent: Counter<"handler">;
  duplicate: Counter<"handler">;
  absorbed: Counter<"handler">;
}

/**
 * `demo_side_effects_total{handler}`, `demo_duplicate_side_effects_total{handler}` and
 * `demo_push_resends_absorbed_total{handler}` on `registry` (get-or-create).
 */
export function sideEffectCounters(registry: Registry): SideEffectCounters {
  const get = (name: string, help: string) =>
    (registry.getSingleMetric(name) as Counter<"handler"> | undefined) ??
    new Counter({ name, help, labelNames: ["handler"], registers: [registry] });
  return {
    sent: get(
      SIDE_EFFECT_METRICS.sent,
      "Pushes the provider delivered for the demo handlers (every delivery; an absorbed re-send is not one).",
    ),
    duplicate: get(
      SIDE_EFFECT_METRICS.duplicate,
      "Pushes delivered for an event id that had already been pushed: duplicates that leaked through dedup and handler idempotency.",
    ),
    absorbed: get(
      SIDE_EFFECT_METRICS.absorbed,
      "Re-sends the push provider absorbed by idempotency key: the window between a push and its record's COMMIT (a crash there, then the redelivery).",
    ),
  };
}

/** Counts one push in `c` by what it did: a delivery (maybe a duplicate) or an absorbed re-send. */
export function countPush(c: SideEffectCounters, handler: string, r: PushResult): void {
  if (r.absorbed) {
    c.absorbed.inc({ handler });
    return;
  }
  c.sent.inc({ handler });
  if (r.duplicate) c.duplicate.inc({ handler });
}

/** Options of one push. */
export interface PushOptions {
  /**
   * The provider's idempotency key: a call with a key already delivered for this handler delivers
   * nothing (an absorbed re-send). Without one, every call delivers. @default none
   */
  idempotencyKey?: string;
}

/** What one push did. */
export interface PushResult {
  /** True when this call delivered for an event id delivered before: a duplicate side effect. */
  duplicate: boolean;
  /** True when the provider delivered nothing: the idempotency key had been delivered already. */
  absorbed: boolean;
}

/** Observer of pushes (a workshop run counts its own). */
export type PushObserver = (handler: string, eventId: string, r: PushResult) => void;

/** The side-effect store seam. */
export interface SideEffectStore {
  readonly kind: "postgres" | "memory";
  /**
   * Idempotent send (spec §5): in one transaction, record `eventId` for `handler` and, only when
   * the row is new, run `push`. If `push` throws, the record is rolled back and the error thrown.
   * Resolves `"sent"` or `"skipped"` (already sent: nothing new happens).
   */
  sendOnce(handler: string, eventId: string, push: () => Promise<void>): Promise<"sent" | "skipped">;
  /**
   * The push itself (the provider call): writes the provider ledger and reports whether it
   * delivered a duplicate or was absorbed by `opts.idempotencyKey`. **Without a key, every call
   * delivers.**
   */
  push(handler: string, eventId: string, opts?: PushOptions): Promise<PushResult>;
  /** Releases connections; `drop` also deletes the store's tables (a workshop run's own schema). */
  close(drop?: boolean): Promise<void>;
}

/** In-process store (embedded mode). */
export class MemorySideEffectStore implements SideEffectStore {
  readonly kind = "memory" as const;
  private readonly sent = new Map<string, Set<string>>();
  private readonly ledger = new Map<string, { pushes: number; attempts: number }>();
  /** `handler\0key` → the event id delivered with that key. */
  private readonly keys = new Map<string, string>();
  constructor(private readonly observe?: PushObserver) {}

  async sendOnce(handler: string, eventId: string, push: () => Promise<void>): Promise<"sent" | "skipped"> {
    let set = this.sent.get(handler);
    if (!set) this.sent.set(handler, (set = new Set()));
    if (set.has(eventId)) return "skipped";
    set.add(eventId); // the "row", visible to concurrent callers at once like a row lock
    try {
      await push();
    } catch (e) {
      set.delete(eventId); // rollback
      throw e;
    }
    return "sent";
  }

  async push(handler: string, eventId: string, opts: PushOptions = {}): Promise<PushResult> {
    const key = opts.idempotencyKey === undefined ? undefined : `${handler}\u0000${opts.idempotencyKey}`;
    const delivered = key === undefined ? undefined : this.keys.get(key);
    // An absorbed re-send is an attempt on the delivery its key made (possibly for another event id).
    const row = this.row(handler, delivered ?? eventId);
    row.attempts++;
    let r: PushResult;
    if (delivered !== undefined) r = { duplicate: false, absorbed: true };
    else {
      if (key !== undefined) this.keys.set(key, eventId);
      row.pushes++;
      r = { duplicate: row.pushes > 1, absorbed: false };
    }
    this.observe?.(handler, eventId, r);
    return r;
  }

  /** The provider ledger's row of `eventId`: deliveries and calls (for tests and the workshop). */
  ledgerRow(handler: string, eventId: string): { pushes: number; attempts: number } {
    return { ...(this.ledger.get(`${handler}\u0000${eventId}`) ?? { pushes: 0, attempts: 0 }) };
  }

  private row(handler: string, eventId: string): { pushes: number; attempts: number } {
    const k = `${handler}\u0000${eventId}`;
    let row = this.ledger.get(k);
    if (!row) this.ledger.set(k, (row = { pushes: 0, attempts: 0 }));
    return row;
  }

  async close(): Promise<void> {
    this.sent.clear();
    this.ledger.clear();
    this.keys.clear();
  }
}
