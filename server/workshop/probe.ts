/**
 * What a workshop run observes: two probe middlewares placed in the stack (one outermost, one
 * right outside the Deduplicator), the handler wrapper, the DLQ publisher wrapper and the push
 * ledger feed a {@link RunProbe}, which keeps the counts of the summary and a capped timeline.
 */
import {
  InProgressError,
  toError,
  namedMiddleware,
  type Handler,
  type Message,
  type Middleware,
  type Publisher,
} from "@/server/dedup";
import { REASON_POISONED_KEY, SUBSCRIBER_POISONED_KEY } from "@/names/dedup";
import {
  TIMELINE_CAP,
  type DeliveryVerdict,
  type GuaranteeRun,
  type RunSummary,
  type TimelineEntry,
} from "@/lib/api/workshop";
import type { StackExtras } from "@/server/notification/service";

/** Name of the probe middleware (`middlewareName`), so a stack listing shows it apart from the library's. */
export const PROBE_NAME = "probe";

/** Replica name from `context.subscriber` (`kafka/replica-1` → `replica-1`). */
export function replicaOf(msg: Pick<Message, "context">): string {
  const s = msg.context.subscriber ?? "";
  const i = s.indexOf("/");
  return i >= 0 ? s.slice(i + 1) : s || "?";
}

/** Counts and timeline of one run. */
export class RunProbe {
  readonly published = new Set<string>();
  /** Records the broker acknowledged on the run's topic (events, re-sends and replays: what Kafka holds). */
  records = 0;
  deliveries = 0;
  handlerCalls = 0;
  deduplicated = 0;
  sideEffects = 0;
  duplicateSideEffects = 0;
  readonly succeeded = new Set<string>();
  readonly acked = new Set<string>();
  readonly inDlq = new Set<string>();
  readonly replayed = new Set<string>();
  readonly timeline: TimelineEntry[] = [];
  timelineTotal = 0;
  /** Time of the last delivery event (settling detection). */
  lastActivity = Date.now();
  /** Each guarantee a scenario compares, as it stands (the crash storm sets it); null for the other scenarios. */
  guarantees: GuaranteeRun[] | null = null;
  private readonly calledInAttempt = new WeakMap<Message, { called: boolean; ok: boolean }>();
  private readonly lastAttempt = new Map<string, number>();

  constructor(private readonly cap = TIMELINE_CAP) {}

  /** Records an event of the timeline (capped; `timelineTotal` counts all). */
  entry(uuid: string, replica: string, attempt: number, verdict: DeliveryVerdict, note?: string): void {
    this.timelineTotal++;
    this.lastActivity = Date.now();
    if (this.timeline.length < this.cap)
      this.timeline.push({ at: new Date().toISOString(), uuid, replica, attempt, verdict, ...(note ? { note } : {}) });
  }

  /** The summary now. `lost` = published, never succeeded, not (still) in the DLQ. */
  summary(): RunSummary {
    let lost = 0;
    for (const id of this.published)
      if (!this.succeeded.has(id) && !(this.inDlq.has(id) && !this.replayed.has(id))) lost++;
    let dlq = 0;
    for (const id of this.inDlq) if (!this.replayed.has(id)) dlq++;
    return {
      published: this.published.size,
      records: this.records,
      deliveries: this.deliveries,
      handlerCalls: this.handlerCalls,
      deduplicated: this.deduplicated,
      sideEffects: this.sideEffects,
      duplicateSideEffects: this.duplicateSideEffects,
      lost,
      dlq,
    };
  }

  /** True when every published message was acked at least once (processed, swallowed or sent to the DLQ). */
  allAcked(): boolean {
    for (const id of this.published) if (!this.acked.has(id)) return false;
    return true;
  }

  /** Outermost probe: one count per delivery; an ack marks the uuid settled. */
  deliveryProbe(): Middleware {
    return namedMiddleware(PROBE_NAME, (next) => async (msg) => {
      this.deliveries++;
      this.lastActivity = Date.now();
      const r = await next(msg);
      this.acked.add(msg.uuid);
      return r;
    });
  }

  /** Probe right outside the Deduplicator (or the handler when there is none): the verdict of each attempt. */
  attemptProbe(): Middleware {
    return namedMiddleware(PROBE_NAME, (next) => async (msg) => {
      const state = { called: false, ok: false };
      this.calledInAttempt.set(msg, state);
      const attempt = msg.context.attempt ?? 1;
      this.lastAttempt.set(msg.uuid, attempt);
      try {
        const r = await next(msg);
        if (!state.called) {
          this.deduplicated++;
          this.entry(msg.uuid, replicaOf(msg), attempt, "deduplicated");
        }
        return r;
      } catch (e) {
        const err = toError(e);
        if (err instanceof InProgressError)
          this.entry(msg.uuid, replicaOf(msg), attempt, "in-progress", "another replica holds the lease");
        else if (!state.called) this.entry(msg.uuid, replicaOf(msg), attempt, "error", err.message);
        throw e;
      }
    });
  }

  /** Wraps the handler: counts calls and successes, logs each call's verdict. */
  wrapHandler(h: Handler): Handler {
    return async (msg) => {
      this.handlerCalls++;
      const state = this.calledInAttempt.get(msg);
      if (state) state.called = true;
      const attempt = msg.context.attempt ?? 1;
      this.lastAttempt.set(msg.uuid, attempt);
      try {
        const r = await h(msg);
        this.succeeded.add(msg.uuid);
        this.entry(msg.uuid, replicaOf(msg), attempt, "processed");
        return r;
      } catch (e) {
        this.entry(msg.uuid, replicaOf(msg), attempt, "error", toError(e).message);
        throw e;
      }
    };
  }

  /**
   * The probes as extra middleware of a run's stack (`buildStack`'s extras): the delivery probe
   * outermost, the attempt probe right before the Deduplicator, the DLQ publisher wrapped. The
   * stack's code does not know the workshop: the workshop hands its probes in.
   */
  stackExtras(): StackExtras {
    return {
      outermost: [this.deliveryProbe()],
      beforeDedup: [this.attemptProbe()],
      wrapDlqPublisher: (p) => this.wrapDlqPublisher(p),
    };
  }

  /** Wraps the DLQ publisher: every message that reached the DLQ is logged `poisoned`. */
  wrapDlqPublisher(p: Publisher): Publisher {
    return {
      publish: async (topic, ...msgs) => {
        await p.publish(topic, ...msgs);
        for (const m of msgs) {
          this.inDlq.add(m.uuid);
          this.replayed.delete(m.uuid);
          const replica = (m.metadata[SUBSCRIBER_POISONED_KEY] ?? "").split("/").pop() || "?";
          this.entry(m.uuid, replica, this.lastAttempt.get(m.uuid) ?? 1, "poisoned", m.metadata[REASON_POISONED_KEY]);
        }
      },
      close: () => p.close(),
    };
  }

  /** Feeds the push ledger's verdicts. */
  onPush(duplicate: boolean): void {
    this.sideEffects++;
    if (duplicate) this.duplicateSideEffects++;
  }
}
