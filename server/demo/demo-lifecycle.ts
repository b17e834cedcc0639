/**
 * The live demo's replicas coming and going: the main replica, which starts and stops with the
 * demo, and the extra ones of two duplicate sources — replicas that join and leave (source b, a
 * rebalance each time) and replicas that crash before their offset commit (source d, and rarely in
 * the embedded background). Each replica runs the three handlers over the store with its faults,
 * and is exported in `dedup_consumer_info` while it is a member.
 */
import { handlerGroupId } from "@/names/kafka";
import { type DedupRepository, dedupMetrics, dedupRecorder } from "@/server/dedup";
import { DEDUP_ERROR_REASON, EVENT_TYPE_KEY, POISON_REASON_CLASS } from "@/names/dedup";
import {
  DEMO_HANDLER_SPECS,
  DEMO_LEASE_MS,
  DEMO_SIDE_EFFECTS,
  DEMO_TIMEOUT_MS,
} from "@/server/notification/demo-handlers";
import type { BeforeCommit, UnreadableRecord } from "@/server/transport/partition-pump";
import {
  acceptEventType,
  buildStack,
  notificationHandler,
  Replica,
  type HandlerBehaviour,
  type ServiceHandler,
} from "@/server/notification/service";
import { consumerInfoGauge } from "@/server/transport/replica-id";
import type { BackgroundDuplicates } from "./background-duplicates";
import type { DemoSourcesState, ResolvedDemoOptions } from "./demo-options";
import { pause } from "./demo-traffic";

/** The handler that owns a record of this event type: its own handler, or the first one. */
function ownerOf(eventType: string | undefined): string {
  return (DEMO_HANDLER_SPECS.find((h) => h.eventType === eventType) ?? DEMO_HANDLER_SPECS[0]!).name;
}

const DEMO_RETRY = {
  maxRetries: 4,
  initialIntervalMs: 200,
  maxIntervalMs: 2000,
  multiplier: 2,
  randomizationFactor: 0.3,
};

/** Starts and stops the demo's replicas, and runs the sources that make replicas join, leave and crash. */
export class DemoLifecycle {
  private readonly main: Replica[] = [];
  private readonly extra: Replica[] = [];
  private joins = 0;
  private crashes = 0;

  /**
   * `faulty`: the store behind the store faults, what the handlers claim keys in; `signal` aborts
   * when the demo stops and ends the loops.
   */
  constructor(
    private readonly o: ResolvedDemoOptions,
    private readonly faulty: DedupRepository,
    private readonly sources: DemoSourcesState,
    private readonly background: BackgroundDuplicates | null,
    private readonly signal: AbortSignal,
  ) {}

  /** Replicas that are members now (the main one and the extra ones). */
  get count(): number {
    return this.main.length + this.extra.length;
  }

  /** Starts the main replica (with the `beforeCommit` fault of the options); a failed start leaves nothing running. */
  async startMain(): Promise<void> {
    const r = this.replica(this.o.replicaName, this.o.beforeCommit);
    try {
      await r.start();
    } catch (e) {
      await r.stop().catch(() => undefined);
      throw e;
    }
    this.main.push(r);
    this.markLive(r, true);
  }

  /** The loops of the replica sources, each ending when the demo stops. */
  loops(): Promise<void>[] {
    return [
      this.whileOn(
        () => this.sources.rebalance,
        (s) => this.rebalanceTurn(s),
      ),
      this.whileOn(
        () => this.sources.restartBeforeCommit,
        (s) => this.restartTurn(s),
      ),
      this.backgroundRestartLoop(),
    ];
  }

  /** Every replica finishes its in-flight work, commits and leaves. */
  async stopAll(): Promise<void> {
    const all = [...this.extra, ...this.main];
    await Promise.allSettled(all.map((r) => r.stop()));
    for (const r of all) this.markLive(r, false);
    this.extra.length = 0;
    this.main.length = 0;
  }

  /** The handlers of one replica (each handler its own group on the shared topic). */
  private handlers(): ServiceHandler[] {
    const behaviour = (): HandlerBehaviour => ({
      idempotent: true,
      failBeforePush: () => this.sources.retryOnError.enabled && Math.random() < this.sources.retryOnError.rate,
    });
    return DEMO_HANDLER_SPECS.map((h) => {
      const stack = buildStack(
        {
          order: "spec",
          retry: DEMO_RETRY,
          timeoutMs: DEMO_TIMEOUT_MS,
          ttlClass: h.ttlClass,
          sideEffects: DEMO_SIDE_EFFECTS,
          dedup: {
            repository: this.faulty,
            failureMode: h.failureMode,
            service: this.o.service,
            ttlMs: h.ttlMs,
            marking: "lease",
            leaseMs: DEMO_LEASE_MS,
            registry: this.o.registry,
            logDuplicates: "sampled",
          },
        },
        this.o.transport.publisher,
        this.o.dlqTopic,
      );
      return {
        name: h.name,
        topic: this.o.topic,
        groupId: handlerGroupId(this.o.service, h.name),
        dlqTopic: this.o.dlqTopic,
        // Every handler's group reads every record; one of them owns an unreadable one (DLQ + count).
        claimsUnreadable: (rec: UnreadableRecord) => ownerOf(rec.metadata[EVENT_TYPE_KEY]) === h.name,
        handler: notificationHandler(h.name, this.o.store, behaviour),
        // Routing before the stack: the pre-claim sees only this handler's event type.
        accept: acceptEventType(h.eventType),
        middleware: stack,
      };
    });
  }

  private replica(name: string, beforeCommit?: BeforeCommit): Replica {
    // The recorder creates every reason's series at 0 for the service (the first marshal counts as an increase).
    const rec = dedupRecorder(this.o.registry, this.o.service);
    return new Replica({
      transport: this.o.transport,
      // The store itself, not the fault-injecting wrapper: one DLQ copy per unreadable record.
      dlqRepository: this.o.repository,
      replica: name,
      handlers: this.handlers(),
      subscriber: {
        commitIntervalMs: this.o.commitIntervalMs,
        beforeCommit,
        onUnreadable: (u) => {
          rec.error(DEDUP_ERROR_REASON.marshal, ownerOf(u.metadata[EVENT_TYPE_KEY]));
          // It went to the owner's DLQ: counted there like any poisoned message (the DLQ panels).
          if (this.o.registry)
            dedupMetrics(this.o.registry).poisoned.inc({
              service: this.o.service,
              topic: u.topic,
              handler: ownerOf(u.metadata[EVENT_TYPE_KEY]),
              reason_poisoned: POISON_REASON_CLASS.marshal,
            });
        },
      },
    });
  }

  /** Runs `turn` with the source's settings over and over while the source is on, until the demo stops. */
  private async whileOn<S extends { enabled: boolean }>(source: () => S, turn: (s: S) => Promise<void>): Promise<void> {
    while (!this.signal.aborted) {
      const s = source();
      if (s.enabled) await turn(s);
      else await pause(500, this.signal);
    }
  }

  /** (b) Extra replicas join the groups, stay `periodMs`, leave, and come back after `periodMs`. */
  private async rebalanceTurn(s: DemoSourcesState["rebalance"]): Promise<void> {
    const joined: Replica[] = [];
    for (let i = 0; i < s.replicas; i++) {
      const r = this.replica(`${this.o.replicaName}-r${++this.joins}`);
      this.extra.push(r);
      joined.push(r);
      await r.start().then(
        () => this.markLive(r, true),
        (e) => console.warn(`[demo] extra replica failed to join: ${(e as Error).message}`),
      );
    }
    await pause(s.periodMs, this.signal);
    for (const r of joined) await this.leave(r);
    await pause(s.periodMs, this.signal);
  }

  /** (d) A replica joins, runs its handlers for one batch, and exits before committing; the next comes after `periodMs`. */
  private async restartTurn(s: DemoSourcesState["restartBeforeCommit"]): Promise<void> {
    await this.crashOnce(s.periodMs);
    await pause(s.periodMs, this.signal);
  }

  /** Background: now and then one replica processes a batch and exits before committing (a redelivery). */
  private async backgroundRestartLoop(): Promise<void> {
    if (!this.background) return;
    while (!this.signal.aborted) {
      await pause(this.background.nextRestartMs(), this.signal);
      if (this.signal.aborted || this.sources.restartBeforeCommit.enabled || !this.sources.traffic.enabled) continue;
      await this.crashOnce(5000);
    }
  }

  /** One replica joins, runs until it crashes before its first commit (or `maxMs`), and leaves. */
  private async crashOnce(maxMs: number): Promise<void> {
    const r = this.replica(`${this.o.replicaName}-crash${++this.crashes}`, () => "crash");
    this.extra.push(r);
    try {
      await r.start();
      this.markLive(r, true);
      const until = Date.now() + maxMs;
      while (!r.crashed && Date.now() < until && !this.signal.aborted) await pause(200, this.signal);
    } catch (e) {
      console.warn(`[demo] crashing replica failed to join: ${(e as Error).message}`);
    }
    await this.leave(r);
  }

  /** An extra replica stops and is no longer a member. */
  private async leave(r: Replica): Promise<void> {
    await r.stop().catch(() => undefined);
    this.markLive(r, false);
    this.extra.splice(this.extra.indexOf(r), 1);
  }

  /** Exports (or withdraws) a replica in `dedup_consumer_info`: what the Overview joins group members on. */
  private markLive(r: Replica, live: boolean): void {
    if (!this.o.registry) return;
    const labels = { service: this.o.service, replica: r.name };
    if (live) consumerInfoGauge(this.o.registry).set(labels, 1);
    else consumerInfoGauge(this.o.registry).remove(labels);
  }
}
