/**
 * The live demo: the `notification` service consuming its topic (`DEMO_TOPIC`, default `demo.events`) with its three handlers, a
 * traffic publisher, the four switchable duplicate sources of spec §1 (each the real mechanism),
 * and store faults — what keeps the dashboard alive and lets a presenter provoke each panel.
 */
import { ulid } from "ulid";
import { FaultyRepository } from "@/server/dedup/faulty-repository";
import type { HandlerSetup } from "@/server/dedup/lint";
import { type Message } from "@/server/dedup/message";
import { CORRELATION_ID_KEY, DEDUP_ERROR_REASON, dlqTopicOf, EVENT_TYPE_KEY, POISON_REASON_CLASS } from "@/names/dedup";
import { dedupMetrics, dedupRecorder } from "@/server/dedup/metrics";
import type { DemoFaults, DemoFaultsPatch, DemoSources, DemoSourcesPatch } from "@/lib/api/demo";
import { DEMO_TOPIC } from "@/lib/api/consumers";
import { DEMO_HANDLER_SPECS, DEMO_LEASE_MS, DEMO_PARTITIONS, DEMO_TIMEOUT_MS, demoHandlerSetups } from "@/server/notification/demo-handlers";
import type { BeforeCommit, UnreadableRecord } from "@/server/transport/partition-pump";
import { acceptEventType, buildStack, notificationHandler, Replica, type HandlerBehaviour, type ServiceHandler } from "@/server/notification/service";
import { consumerInfoGauge, replicaId } from "@/server/transport/replica-id";
import { BackgroundDuplicates } from "./background-duplicates";
import type { DemoServiceOptions } from "./demo-options";

export type { DemoServiceOptions };

type SourcesState = Omit<DemoSources, "mode" | "running">;

/** The handler that owns a record of this event type: its own handler, or the first one. */
function ownerOf(eventType: string | undefined): string {
  return (DEMO_HANDLER_SPECS.find((h) => h.eventType === eventType) ?? DEMO_HANDLER_SPECS[0]!).name;
}

const DEMO_RETRY = { maxRetries: 4, initialIntervalMs: 200, maxIntervalMs: 2000, multiplier: 2, randomizationFactor: 0.3 };

/** The live demo service. */
export class DemoService {
  private readonly o: Required<Omit<DemoServiceOptions, "redis" | "registry" | "beforeCommit" | "backgroundDuplicates">> & Pick<DemoServiceOptions, "redis" | "registry" | "beforeCommit">;
  private readonly background: BackgroundDuplicates | null;
  private readonly faulty: FaultyRepository;
  private readonly main: Replica[] = [];
  private readonly extra: Replica[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopCtl = new AbortController();
  private running = false;
  private seq = 0;
  private crashCount = 0;
  private cutoffUntil: number | null = null;
  private cutoffTimer: NodeJS.Timeout | null = null;
  private readonly sources: SourcesState;
  private readonly faults = { latencyMs: 0, errorRate: 0 };
  private readonly loops: Promise<void>[] = [];

  constructor(options: DemoServiceOptions) {
    const topic = options.topic ?? DEMO_TOPIC;
    this.o = { ratePerSec: 5, topic, dlqTopic: dlqTopicOf(topic), commitIntervalMs: 2000, replicaName: replicaId(), ...options };
    if (!(this.o.ratePerSec >= 0 && this.o.ratePerSec <= 5000)) throw new RangeError("DemoService: ratePerSec must be in [0, 5000] (DEMO_RATE)");
    this.faulty = new FaultyRepository(this.o.repository);
    const bg = options.backgroundDuplicates ?? (options.transport.mode === "embedded" ? {} : false);
    this.background = bg === false ? null : new BackgroundDuplicates(bg);
    this.sources = {
      traffic: { enabled: this.o.ratePerSec > 0, ratePerSec: this.o.ratePerSec },
      retryOnError: { enabled: false, rate: 0.2 },
      rebalance: { enabled: false, replicas: 1, periodMs: 15_000 },
      forwarderRepublish: { enabled: false, rate: 0.1, delayMs: 3000 },
      restartBeforeCommit: { enabled: false, periodMs: 20_000 },
    };
  }

  get mode(): "embedded" | "real" {
    return this.o.transport.mode;
  }

  /** Whether the consumer runs. */
  get isRunning(): boolean {
    return this.running;
  }

  /** The handlers' declared setups right now (extra replicas count; lint input for the dashboard). */
  handlerSetups(): HandlerSetup[] {
    return demoHandlerSetups(this.o.repository.kind, this.main.length + this.extra.length);
  }

  /** The handlers of one replica (each handler its own group on the shared topic). */
  private handlers(): ServiceHandler[] {
    const behaviour = (): HandlerBehaviour => ({
      idempotent: true,
      failBeforePush: () => this.sources.retryOnError.enabled && Math.random() < this.sources.retryOnError.rate,
    });
    return DEMO_HANDLER_SPECS.map((h) => {
      const stack = buildStack(
        { order: "spec", retry: DEMO_RETRY, timeoutMs: DEMO_TIMEOUT_MS, dedup: { repository: this.faulty, failureMode: h.failureMode, service: this.o.service, ttlMs: h.ttlMs, marking: "lease", leaseMs: DEMO_LEASE_MS, registry: this.o.registry, logDuplicates: "sampled" } },
        this.o.transport.publisher,
        this.o.dlqTopic,
      );
      return {
        name: h.name,
        topic: this.o.topic,
        groupId: `${this.o.service}.${h.name}`,
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
          rec.error(DEDUP_ERROR_REASON.marshal);
          // It went to the owner's DLQ: counted there like any poisoned message (the DLQ panels).
          if (this.o.registry) dedupMetrics(this.o.registry).poisoned.inc({ service: this.o.service, topic: u.topic, handler: ownerOf(u.metadata[EVENT_TYPE_KEY]), reason_poisoned: POISON_REASON_CLASS.marshal });
        },
      },
    });
  }

  /** Creates the topics if missing, starts the main replica, the traffic and the source loops. */
  async start(): Promise<void> {
    if (this.running) return;
    await this.o.transport.createTopics([
      { name: this.o.topic, partitions: DEMO_PARTITIONS },
      { name: this.o.dlqTopic, partitions: 1 },
    ]);
    const r = this.replica(this.o.replicaName, this.o.beforeCommit);
    try {
      await r.start();
    } catch (e) {
      await r.stop().catch(() => undefined);
      throw e;
    }
    this.main.push(r);
    this.markLive(r, true);
    this.running = true;
    this.loops.push(this.trafficLoop(), this.rebalanceLoop(), this.restartLoop(), this.backgroundRestartLoop());
  }

  /** Graceful stop: loops end, replicas finish in-flight work, commit and leave. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopCtl.abort();
    for (const t of this.timers) clearTimeout(t);
    if (this.cutoffTimer) clearTimeout(this.cutoffTimer);
    await Promise.allSettled(this.loops);
    await Promise.allSettled([...this.extra, ...this.main].map((r) => r.stop()));
    for (const r of [...this.extra, ...this.main]) this.markLive(r, false);
    this.extra.length = 0;
    this.main.length = 0;
  }

  // --- sources -------------------------------------------------------------------------------

  /** `GET /api/demo/sources`. */
  getSources(): DemoSources {
    return { mode: this.mode, running: this.running, ...structuredClone(this.sources) };
  }

  /** `PUT /api/demo/sources`: merges the patch (already validated). */
  setSources(p: DemoSourcesPatch): DemoSources {
    for (const k of Object.keys(p) as Array<keyof DemoSourcesPatch>) Object.assign(this.sources[k], p[k]);
    return this.getSources();
  }

  // --- faults --------------------------------------------------------------------------------

  /** `GET /api/demo/faults`. */
  getFaults(): DemoFaults {
    const active = this.cutoffUntil !== null && this.cutoffUntil > Date.now();
    return {
      mode: this.mode,
      running: this.running,
      latencyMs: this.faults.latencyMs,
      errorRate: this.faults.errorRate,
      redisCutoff: { available: this.o.redis !== undefined, active, until: active ? new Date(this.cutoffUntil!).toISOString() : null },
    };
  }

  /**
   * `PUT /api/demo/faults`. `redisCutoffMs` > 0 disconnects the consumer's Redis client for that
   * long (real mode only: a RangeError otherwise); 0 reconnects now.
   */
  setFaults(p: DemoFaultsPatch): DemoFaults {
    if (p.latencyMs !== undefined) this.faults.latencyMs = p.latencyMs;
    if (p.errorRate !== undefined) this.faults.errorRate = p.errorRate;
    this.faulty.set({ latencyMs: this.faults.latencyMs, errorRate: this.faults.errorRate });
    if (p.redisCutoffMs !== undefined) {
      const redis = this.o.redis;
      if (!redis) throw new RangeError("redisCutoffMs: the Redis cut-off needs real mode (REDIS_URL); use errorRate in embedded mode");
      if (this.cutoffTimer) clearTimeout(this.cutoffTimer);
      this.cutoffTimer = null;
      if (p.redisCutoffMs > 0) {
        this.cutoffUntil = Date.now() + p.redisCutoffMs;
        redis.disconnect();
        this.cutoffTimer = setTimeout(() => this.reconnect(), p.redisCutoffMs);
      } else {
        this.reconnect();
      }
    }
    return this.getFaults();
  }

  private reconnect(): void {
    this.cutoffUntil = null;
    this.cutoffTimer = null;
    const r = this.o.redis;
    if (r && (r.status === "end" || r.status === "close")) r.connect().catch(() => undefined);
  }

  // --- loops ---------------------------------------------------------------------------------

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.stopCtl.signal;
      if (signal.aborted) return resolve();
      const onAbort = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private event(): Message {
    const r = Math.random();
    let acc = 0;
    let spec = DEMO_HANDLER_SPECS[0]!;
    for (const h of DEMO_HANDLER_SPECS) {
      acc += h.trafficShare;
      if (r < acc) {
        spec = h;
        break;
      }
    }
    const seq = this.seq++;
    const payload = JSON.stringify({ seq, userId: `u${seq % 97}`, at: new Date().toISOString() });
    return { uuid: ulid(), metadata: { [EVENT_TYPE_KEY]: spec.eventType, [CORRELATION_ID_KEY]: ulid() }, payload: Buffer.from(payload), signal: this.stopCtl.signal, context: {} };
  }

  private async trafficLoop(): Promise<void> {
    let carry = 0;
    const tickMs = 100;
    while (!this.stopCtl.signal.aborted) {
      const t = this.sources.traffic;
      if (t.enabled && t.ratePerSec > 0) {
        carry += (t.ratePerSec * tickMs) / 1000;
        const n = Math.floor(carry);
        carry -= n;
        if (n > 0) {
          const msgs = Array.from({ length: n }, () => this.event());
          try {
            await this.o.transport.publisher.publish(this.o.topic, ...msgs);
            this.forward(msgs);
            this.producerRetries(msgs);
          } catch (e) {
            console.warn(`[demo] publish failed: ${(e as Error).message}`);
            await this.sleep(1000);
          }
        }
      }
      await this.sleep(tickMs);
    }
  }

  /** (c) The forwarder re-publishes some messages with the same UUID after a delay. */
  private forward(msgs: readonly Message[]): void {
    const f = this.sources.forwarderRepublish;
    if (!f.enabled) return;
    const again = msgs.filter(() => Math.random() < f.rate);
    if (again.length === 0) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.stopCtl.signal.aborted) return;
      const copies = again.map((m) => ({ ...m, metadata: { ...m.metadata, "Forwarder-Republish": "1" }, context: {} }));
      this.o.transport.publisher.publish(this.o.topic, ...copies).catch(() => undefined);
    }, f.delayMs);
    this.timers.add(t);
  }

  /** Background: the producer re-sends the records whose ack it lost (same UUID), after its ack timeout. */
  private producerRetries(msgs: readonly Message[]): void {
    const again = this.background?.retries(msgs) ?? [];
    if (again.length === 0) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopCtl.signal.aborted) this.o.transport.publisher.publish(this.o.topic, ...again).catch(() => undefined);
    }, this.background!.opts.ackTimeoutMs);
    this.timers.add(t);
  }

  /** Background: now and then one replica processes a batch and exits before committing (a redelivery). */
  private async backgroundRestartLoop(): Promise<void> {
    if (!this.background) return;
    while (!this.stopCtl.signal.aborted) {
      await this.sleep(this.background.nextRestartMs());
      if (this.stopCtl.signal.aborted || this.sources.restartBeforeCommit.enabled || !this.sources.traffic.enabled) continue;
      await this.crashOnce(5000);
    }
  }

  /** (b) Extra replicas join the groups, stay `periodMs`, leave, and come back after `periodMs`. */
  private async rebalanceLoop(): Promise<void> {
    let n = 0;
    while (!this.stopCtl.signal.aborted) {
      const s = this.sources.rebalance;
      if (!s.enabled) {
        await this.sleep(500);
        continue;
      }
      const joined: Replica[] = [];
      for (let i = 0; i < s.replicas; i++) {
        const r = this.replica(`${this.o.replicaName}-r${++n}`);
        this.extra.push(r);
        joined.push(r);
        await r.start().then(
          () => this.markLive(r, true),
          (e) => console.warn(`[demo] extra replica failed to join: ${(e as Error).message}`),
        );
      }
      await this.sleep(s.periodMs);
      for (const r of joined) {
        await r.stop().catch(() => undefined);
        this.markLive(r, false);
        this.extra.splice(this.extra.indexOf(r), 1);
      }
      await this.sleep(s.periodMs);
    }
  }

  /** (d) A replica joins, runs its handlers for one batch, and exits before committing. */
  private async restartLoop(): Promise<void> {
    while (!this.stopCtl.signal.aborted) {
      const s = this.sources.restartBeforeCommit;
      if (!s.enabled) {
        await this.sleep(500);
        continue;
      }
      await this.crashOnce(s.periodMs);
      await this.sleep(s.periodMs);
    }
  }

  /** One replica joins, runs until it crashes before its first commit (or `maxMs`), and leaves. */
  private async crashOnce(maxMs: number): Promise<void> {
    const r = this.replica(`${this.o.replicaName}-crash${++this.crashCount}`, () => "crash");
    this.extra.push(r);
    try {
      await r.start();
      this.markLive(r, true);
      const until = Date.now() + maxMs;
      while (!r.crashed && Date.now() < until && !this.stopCtl.signal.aborted) await this.sleep(200);
    } catch (e) {
      console.warn(`[demo] crashing replica failed to join: ${(e as Error).message}`);
    }
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
