/**
 * What a workshop scenario runs with: its own topic, DLQ, consumer group, dedup key prefix and
 * side-effect tables (so it never disturbs the live demo or another run), a probe that counts,
 * and helpers to publish, start replicas, wait until the run settles, and clean up.
 */
import { randomBytes } from "node:crypto";
import { ulid } from "ulid";
import type { RunPace, RunSeries } from "@/lib/api/workshop";
import type { DeduplicatorOptions, Message, DedupRepository, RetryOptions, Publisher } from "@/server/dedup";
import { CORRELATION_ID_KEY, EVENT_TYPE_KEY } from "@/names/dedup";
import { dedupKeyPrefix } from "@/names/keys";
import { replayDlq } from "@/server/transport/dlq-replay";
import { PublishPacer } from "./pace";
import { RunProbe } from "./probe";
import { dropRunSeries, runSeries } from "./run-series";
import type { ScenarioEnv } from "./scenario-env";
import {
  buildStack,
  notificationHandler,
  Replica,
  type HandlerBehaviour,
  type StackSpec,
} from "@/server/notification/service";
import type { SideEffectStore } from "@/server/notification/side-effects";
import type { ReplicaSubscriberOptions, Transport } from "@/server/transport";

export type { ScenarioEnv } from "./scenario-env";

/** Time-compressed retry: the same shape as the default, in tens of milliseconds. */
export const FAST_RETRY: RetryOptions = {
  maxRetries: 4,
  initialIntervalMs: 40,
  maxIntervalMs: 300,
  multiplier: 2,
  randomizationFactor: 0.2,
};

/** Reads `seq` from a demo payload (`{"seq": n, …}`), -1 if absent. */
export function seqOf(msg: Pick<Message, "payload">): number {
  try {
    const v = JSON.parse(Buffer.from(msg.payload).toString("utf8")) as { seq?: unknown };
    return typeof v.seq === "number" ? v.seq : -1;
  } catch {
    return -1;
  }
}

/** Options of one published event. */
export interface PublishOptions {
  eventType?: string;
  correlationId?: string;
  /** Extra payload fields. */
  fields?: Record<string, unknown>;
}

/** One replica's setup in a scenario. */
export interface ReplicaSetup {
  stack: Omit<StackSpec, "dedup"> & { dedup: Partial<DeduplicatorOptions> | null };
  behaviour: HandlerBehaviour;
  /** Use this repository instead of the shared one (in-process-cache anti-pattern). */
  repository?: DedupRepository;
  subscriber?: Omit<ReplicaSubscriberOptions, "groupId" | "replica" | "dlq">;
}

/** The context handed to a scenario's script. */
export class ScenarioContext {
  readonly probe = new RunProbe();
  readonly runId: string;
  readonly topic: string;
  readonly dlqTopic: string;
  readonly groupId: string;
  readonly prefix: string;
  readonly store: SideEffectStore;
  readonly replicas: Replica[] = [];
  private seq = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly pendingPublishes = new Set<Promise<unknown>>();
  private readonly repo: DedupRepository;
  /** Payload of each event published, for a re-publish of the same event. */
  private readonly payloads = new Map<string, Uint8Array>();
  /** The run's own publisher (see `Transport.newPublisher`). */
  readonly publisher: Publisher;
  private readonly pacer: PublishPacer;

  constructor(
    readonly env: ScenarioEnv,
    readonly scenario: string,
    readonly signal: AbortSignal,
    pace: RunPace = "fast",
  ) {
    this.pacer = new PublishPacer(pace);
    this.runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    const base = `workshop.${scenario}.${this.runId}`;
    this.topic = base;
    this.dlqTopic = `${base}.dlq`;
    this.groupId = base;
    this.prefix = `${dedupKeyPrefix(env.service, scenario)}:${this.runId}`;
    // A re-send the provider absorbed by its idempotency key delivered nothing: not a side effect.
    this.store = env.sideEffectStore(`ws_${this.runId}`, (_h, _id, r) => {
      if (!r.absorbed) this.probe.onPush(r.duplicate);
    });
    this.repo = env.sharedRepository();
    this.publisher = env.transport.newPublisher();
  }

  /** The run's shared dedup repository. */
  get repository(): DedupRepository {
    return this.repo;
  }

  /** Creates the run's topic and DLQ. */
  async setup(): Promise<void> {
    await this.env.transport.createTopics([
      { name: this.topic, partitions: this.env.partitions ?? 3 },
      { name: this.dlqTopic, partitions: 1 },
    ]);
  }

  /**
   * Publishes `n` new events (fresh ULIDs); resolves their uuids. At the narrated pace one by one,
   * each in its slot (see ./pace.ts); at once otherwise.
   */
  async publish(n: number, o: PublishOptions = {}): Promise<string[]> {
    if (!this.pacer.paced) return this.publishNow(n, o);
    const ids: string[] = [];
    for (let i = 0; i < n && !this.signal.aborted; i++) {
      await this.sleep(this.pacer.take());
      ids.push(...(await this.publishNow(1, o)));
    }
    return ids;
  }

  private async publishNow(n: number, o: PublishOptions): Promise<string[]> {
    const msgs: Message[] = [];
    for (let i = 0; i < n; i++) {
      const seq = this.seq++;
      const metadata: Record<string, string> = {
        [EVENT_TYPE_KEY]: o.eventType ?? "review.created",
        [CORRELATION_ID_KEY]: o.correlationId ?? ulid(),
      };
      const payload = JSON.stringify({ seq, ...o.fields });
      msgs.push({ uuid: ulid(), metadata, payload: Buffer.from(payload), signal: this.signal, context: {} });
    }
    for (const m of msgs) this.payloads.set(m.uuid, m.payload);
    for (const m of msgs) this.probe.published.add(m.uuid);
    await this.publisher.publish(this.topic, ...msgs);
    this.probe.records += msgs.length;
    return msgs.map((m) => m.uuid);
  }

  /** Publishes events one by one at `perSec` (in the background); resolves when all are out. */
  publishOverTime(n: number, perSec: number, o: PublishOptions = {}): Promise<string[]> {
    const p = (async () => {
      const ids: string[] = [];
      const gap = 1000 / perSec;
      const start = Date.now();
      for (let i = 0; i < n && !this.signal.aborted; i++) {
        ids.push(...(await this.publishNow(1, o)));
        const wait = start + (i + 1) * gap - Date.now();
        if (wait > 0) await this.sleep(wait);
      }
      return ids;
    })();
    this.pendingPublishes.add(p);
    return p;
  }

  /** Re-publishes existing events with the SAME uuid (a forwarder that crashed before marking its outbox row) after `delayMs`. */
  republishLater(uuids: readonly string[], delayMs: number): void {
    const p = this.sleep(delayMs).then(async () => {
      if (this.signal.aborted || uuids.length === 0) return;
      // The same row again: same UUID, same payload (another payload would be a payload conflict).
      const msgs = uuids.map((uuid) => ({
        uuid,
        metadata: { [EVENT_TYPE_KEY]: "review.created", "Forwarder-Republish": "1" },
        payload: this.payloads.get(uuid) ?? Buffer.from("{}"),
        signal: this.signal,
        context: {},
      }));
      await this.publisher.publish(this.topic, ...msgs);
      this.probe.records += msgs.length;
      // Not settled until the copies were delivered too.
      for (const id of uuids) this.probe.acked.delete(id);
    });
    this.pendingPublishes.add(p);
  }

  /** Starts a replica of the run's consumer group with `setup`. */
  async startReplica(name: string, setup: ReplicaSetup): Promise<Replica> {
    // No hot-UUID sketch: a run's handlers are not the fleet's (the dashboard lists no workshop handler), and a
    // sketch on the process's board would keep exporting the run's topic after its series were dropped.
    const dedup = setup.stack.dedup
      ? {
          repository: setup.repository ?? this.repo,
          service: this.env.service,
          prefix: this.prefix,
          registry: this.env.registry,
          hotKeys: null,
          ...setup.stack.dedup,
        }
      : null;
    const middleware = buildStack({ ...setup.stack, dedup }, this.publisher, this.dlqTopic, this.probe.stackExtras());
    const handler = this.probe.wrapHandler(notificationHandler(this.scenario, this.store, () => setup.behaviour));
    const r = new Replica({
      transport: this.env.transport,
      publisher: this.publisher,
      replica: name,
      handlers: [
        { name: this.scenario, topic: this.topic, groupId: this.groupId, dlqTopic: this.dlqTopic, handler, middleware },
      ],
      subscriber: setup.subscriber,
    });
    this.replicas.push(r);
    await r.start();
    return r;
  }

  /** Sleeps, or returns early when the run is aborted. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.signal.aborted) return resolve();
      const onAbort = () => {
        clearTimeout(t);
        this.timers.delete(t);
        resolve();
      };
      const t = setTimeout(() => {
        this.timers.delete(t);
        this.signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      this.timers.add(t);
      this.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Waits until `cond()` or the run aborts / `timeoutMs` passes; resolves whether it held. */
  async until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (!cond()) {
      if (this.signal.aborted || Date.now() > end) return false;
      await this.sleep(50);
    }
    return true;
  }

  /**
   * Waits until every publish is out, every published message was acked, and nothing was
   * delivered for `quietMs` (late redeliveries and re-publishes arrive in that time).
   */
  async settle(quietMs: number, timeoutMs: number): Promise<boolean> {
    await Promise.allSettled([...this.pendingPublishes]);
    return this.until(() => this.probe.allAcked() && Date.now() - this.probe.lastActivity >= quietMs, timeoutMs);
  }

  /** Replays the run's DLQ to its topic (same uuids); marks what it replayed. */
  async replayDlq(): Promise<number> {
    const r = await replayDlq(this.env.transport, this.dlqTopic, {
      allowTopics: [this.topic],
      groupId: `${this.groupId}.replay`,
      publisher: this.publisher,
      idleMs: this.env.transport.mode === "real" ? 2500 : 500,
      timeoutMs: 30_000,
      onReplayed: (m) => {
        this.probe.records++;
        this.probe.replayed.add(m.uuid);
        this.probe.acked.delete(m.uuid);
      },
    });
    return r.replayed;
  }

  /** The run's series on the workshop registry: every counter value labelled with the run's topic or DLQ. */
  series(): Promise<RunSeries[]> {
    return runSeries(this.env.registry, [this.topic, this.dlqTopic]);
  }

  /** Removes the run's series from the workshop registry, so it stays bounded however many runs there were. */
  async dropSeries(): Promise<void> {
    const registry = this.env.registry;
    if (registry) dropRunSeries(registry, await this.series());
  }

  /** Stops every replica, deletes topics, keys and tables of the run. */
  async teardown(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    await Promise.allSettled(this.replicas.map((r) => r.stop()));
    await Promise.allSettled([...this.pendingPublishes]);
    await this.publisher.close().catch(() => undefined);
    await this.env.transport.deleteTopics([this.topic, this.dlqTopic]);
    const t = this.env.transport as Transport & { deleteGroups?: (ids: string[]) => Promise<void> };
    await t.deleteGroups?.([this.groupId, `${this.groupId}.replay`]);
    await this.env.deleteKeys(this.prefix).catch(() => undefined);
    await this.store.close(true).catch(() => undefined);
  }
}
