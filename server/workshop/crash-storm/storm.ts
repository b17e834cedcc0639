/**
 * The crash storm the guarantees scenario runs against each guarantee: a consumer replica dies
 * right after its `every`-th side effect — before that effect's `done` mark, its inbox COMMIT or
 * its transaction's commit — and a successor takes over, {@link STORM}`.crashes` times; the last
 * replica finishes the stream. In process, as the other crash scenarios do it: the dead replica's
 * subscriber leaves its group without committing (`beforeCommit` → crash), and nothing it still
 * runs has an effect (its store writes fail, its handler sends nothing, an open transaction rolls
 * back). The fault suite proves the same guarantees with real SIGKILLs.
 */
import { namedMiddleware, Router, type Handler, type Message, type Middleware, type Subscriber } from "@/server/dedup";
import type { RunProbe } from "../probe";
import type { ScenarioContext } from "../scenario-context";

/** The storm's size and pace: 60 events, 3 crashes (one every 15 side effects of a replica), chunks of 5, a 1 s lease. */
export const STORM = { events: 60, crashes: 3, chunkSize: 5, leaseMs: 1000 } as const;

/** Side effects a replica performs before it dies at the last of them. */
export const EFFECTS_PER_LIFE = Math.floor(STORM.events / (STORM.crashes + 1));

/** Thrown by the handler of a replica that has died: its open database transaction rolls back, as PostgreSQL does when a process dies. */
export class ReplicaCrashed extends Error {
  constructor(replica: string) {
    super(`${replica} crashed (simulated): nothing it started after that commits`);
    this.name = "ReplicaCrashed";
  }
}

/** One replica's life: alive until its crash point, then dead for good. */
export class Life {
  private isDead = false;
  private effects = 0;
  private readonly deathHooks: Array<() => void> = [];

  constructor(
    /** The replica's name, e.g. `redis-2`. */
    readonly name: string,
    /** Dies right after this many side effects; null: lives to the end of the stream. */
    private readonly dieAfter: number | null,
  ) {}

  get dead(): boolean {
    return this.isDead;
  }

  /** Runs `hook` at the moment of death (the store connection of a dead process fails). */
  onDeath(hook: () => void): void {
    this.deathHooks.push(hook);
  }

  /** Counts a side effect just performed; true when the replica dies right after it (its crash point). */
  performed(): boolean {
    this.effects++;
    if (this.isDead || this.dieAfter === null || this.effects < this.dieAfter) return false;
    this.isDead = true;
    for (const h of this.deathHooks) h();
    return true;
  }

  /** Middleware: a dead replica runs nothing more; what it acks is never committed. */
  guard(): Middleware {
    return namedMiddleware("crash-guard", (next) => async (msg) => (this.isDead ? undefined : next(msg)));
  }

  /** The subscriber's `beforeCommit`: a dead replica leaves its group without committing. */
  readonly beforeCommit = (): "commit" | "crash" => (this.isDead ? "crash" : "commit");
}

/**
 * Counts the side effect a handler just performed for `msg`; at the replica's crash point the
 * crash goes on the run's timeline ("redis-2 crashed right after this side effect, before `what`")
 * and this resolves true.
 */
export function afterEffect(life: Life, probe: RunProbe, msg: Message, what: string): boolean {
  if (!life.performed()) return false;
  const note = `${life.name} crashed right after this side effect, before ${what}`;
  probe.entry(msg.uuid, life.name, msg.context.attempt ?? 1, "error", note);
  return true;
}

/** The probes and guards of a storm replica's stack: the guard outside each probe, so a dead replica's deliveries count nowhere. */
export function stormExtras(life: Life, probe: RunProbe) {
  return {
    outermost: [life.guard(), probe.deliveryProbe()],
    beforeDedup: [life.guard(), probe.attemptProbe()],
    wrapDlqPublisher: probe.wrapDlqPublisher.bind(probe),
  };
}

/** A subscriber that can crash (both transports' group subscribers). */
export type CrashingSubscriber = Subscriber & { readonly crashed: boolean; close(): Promise<void> };

/** One running storm replica. */
export interface StormReplica {
  readonly life: Life;
  readonly subscriber: CrashingSubscriber;
  /** Closes its Router and subscriber (a crashed one has already left its group). */
  stop(): Promise<void>;
}

/** Starts a Router with one handler over `subscriber`; resolves once it joined its group. */
export async function startReplica(
  life: Life,
  o: { handlerName: string; topic: string; subscriber: CrashingSubscriber; middleware: Middleware[]; handler: Handler },
): Promise<StormReplica> {
  const router = new Router({ onError: () => undefined, closeTimeoutMs: 5000 });
  router.addHandler({
    name: o.handlerName,
    topic: o.topic,
    subscriber: o.subscriber,
    handler: o.handler,
    middleware: o.middleware,
  });
  void router.run().catch(() => undefined);
  await router.running;
  return {
    life,
    subscriber: o.subscriber,
    stop: async () => {
      await router.close();
      await o.subscriber.close().catch(() => undefined);
    },
  };
}

/** What a guarantee gives the storm: its replicas and how far its consumer group committed. */
export interface StormTarget {
  /** Short name of its replicas (`redis` → `redis-1`, `redis-2`, …). */
  short: string;
  /** Starts a replica that lives as `life` says, its handler counted by `probe`. */
  startReplica(life: Life, probe: RunProbe): Promise<StormReplica>;
  /** Records of the input topic its consumer group committed. */
  committed(): Promise<number>;
  /** Records on the input topic (one per event, unless a producer wrote some twice). */
  inputRecords(): Promise<number>;
}

/**
 * Publishes the storm's {@link STORM}`.events` events, one record per produce request, and resolves
 * their UUIDs. kafkajs resends a whole multi-partition produce when one partition's leader refuses
 * it ("not the leader" on a topic just created), so the partitions that had accepted it hold their
 * records twice; a guarantee without a dedup key (Kafka transactions) then answers both copies, and
 * a window that ends at one commit per event ends before the last records were read. A
 * single-partition request that is refused wrote nothing: its resend writes each record once.
 */
export async function publishStormInput(ctx: ScenarioContext): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < STORM.events && !ctx.signal.aborted; i++) ids.push(...(await ctx.publish(1)));
  return ids;
}

/**
 * Polls `cond` every 100 ms until it holds, the run aborts or `timeoutMs` passes; resolves whether
 * it held. A poll that throws (a broker that does not know a fresh topic yet) counts as not yet.
 */
export async function untilAsync(ctx: ScenarioContext, cond: () => Promise<boolean>, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (!(await cond().catch(() => false))) {
    if (ctx.signal.aborted || Date.now() > end) return false;
    await ctx.sleep(100);
  }
  return true;
}

/**
 * Runs the storm against `target`: replicas 1…crashes each die at their crash point and are
 * replaced, the last one runs until the group committed the whole input topic (`records`).
 * `onCrash(n)` is told each crash; resolves the number of crashes.
 */
export async function runStorm(
  ctx: ScenarioContext,
  target: StormTarget,
  probe: RunProbe,
  records: number,
  onCrash: (n: number) => void,
): Promise<number> {
  // Each guarantee is measured per event: an input holding an event twice would be counted as the
  // guarantee's duplicate, and a window of one commit per event would end before its last records.
  let onTopic = null as number | null;
  await untilAsync(ctx, async () => ((onTopic = await target.inputRecords()), true), 10_000);
  if (onTopic === null) throw new Error("the input topic's end offsets could not be read within 10 s: not measured");
  if (onTopic !== records)
    throw new Error(
      `the input topic holds ${onTopic} records for ${records} events (a producer wrote some twice): not measured`,
    );
  let crashes = 0;
  for (let i = 1; i <= STORM.crashes + 1; i++) {
    const last = i > STORM.crashes;
    const life = new Life(`${target.short}-${i}`, last ? null : EFFECTS_PER_LIFE);
    const replica = await target.startReplica(life, probe);
    try {
      if (last) {
        const done = await untilAsync(ctx, async () => (await target.committed()) >= records, 60_000);
        if (!done) throw new Error(`${life.name} did not commit the ${records} input records within 60 s`);
      } else {
        if (!(await ctx.until(() => replica.subscriber.crashed, 30_000)))
          throw new Error(`${life.name} did not reach its crash point within 30 s`);
        onCrash(++crashes);
      }
    } finally {
      await replica.stop();
    }
  }
  return crashes;
}
