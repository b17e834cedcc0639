import { randomBytes } from "node:crypto";
import type { Registry } from "prom-client";
import { DedupStoreError, InProgressError, type DedupErrorReason } from "./errors";
import { namedMiddleware, type BatchPreparation, type Handler, type Message, type Middleware } from "./message";
import { dedupRecorder, type DedupRecorder } from "./metrics";
import { TTL_POLICY } from "./policy";
import { CLAIMED_PREFIX, DONE_VALUE, NAIVE_VALUE, PROCESSING_PREFIX, type ClaimRequest, type DedupRepository } from "./repository";
import { DEFAULT_RETRY_OPTIONS, maxRetryWaitMs } from "./retry";

/**
 * How the Deduplicator marks a key (spec §10):
 * - `"lease"` (default, loses nothing): claim `processing:<token>` for `leaseMs`; on success set
 *   `done` for `ttlMs` if still ours (compare-and-set); on failure delete it if still ours
 *   (compare-and-delete). Another consumer's live lease → `InProgressError` (retryable).
 * - `"release"`: one `SET NX PX ttlMs`, deleted (if ours) when the handler fails. Cheapest safe
 *   variant. **Does not cover a crash mid-handler** (the key stays for the whole window: the
 *   redelivery is swallowed, the message lost) **nor a concurrent redelivery while the first run is
 *   still working** (swallowed even if that run then fails).
 * - `"naive"`: **the note's and Watermill's behaviour, kept only to demonstrate the loss**: one
 *   `SET NX PX ttlMs`, never released — inside Retry a failed first attempt turns the retry into a
 *   "duplicate" and the message is acked unprocessed.
 */
export type Marking = "lease" | "release" | "naive";

/** Computes the dedup key of a message (the part after the prefix). Default: `msg.uuid`. */
export type KeyFactory = (msg: Message) => string;

/** Options of {@link deduplicator}. */
export interface DeduplicatorOptions {
  /** The store (wrap with `failOpen` / `failClosed`; unwrapped = open). Required. */
  repository: DedupRepository;
  /** Key of a message. Keep the event id (spec §2); never Correlation-Id or a business key. @default msg => msg.uuid */
  keyFactory?: KeyFactory;
  /** Service name: first segment of the key prefix and the `service` metric label. @default "app" */
  service?: string;
  /** Fixed key prefix instead of `<service>:dedup:<handler>` (spec §2). @default derived per handler */
  prefix?: string;
  /** The dedup window: how long a processed key is remembered (spec §3). @default 86400000 (24 h) */
  ttlMs?: number;
  /**
   * `"lease"` only: how long a claim protects a run in progress. Must outlive the longest time one
   * claim is held: one handler attempt in the spec's order (the key is released between attempts),
   * but every attempt if the Deduplicator is placed outside Retry. The default covers the latter
   * for the default retry options: max backoff (1+2+4+8 s) × 1.5 jitter = 22.5 s, plus 5 attempts ×
   * 7.5 s of handler time = 60 s. A crashed owner's message is processed again after this.
   * @default 60000
   */
  leaseMs?: number;
  /** Time limit of ONE store call (not the window: spec §10); slower counts as `redis_timeout`. @default 500 */
  timeoutMs?: number;
  /** Marking protocol. @default "lease" */
  marking?: Marking;
  /** Log each swallowed duplicate through `logger`. @default false */
  logDuplicates?: boolean;
  /** Where logs go. @default console.warn */
  logger?: (line: string) => void;
  /** prom-client Registry for the metrics of `./metrics` (never the global one). @default no metrics */
  registry?: Registry;
  /**
   * A batch pre-claim older than this fraction of its claim's TTL (`leaseMs` under `"lease"`) is
   * re-checked with one more round trip before the handler runs, so the lease it relies on still
   * has at least the rest of the fraction to run. @default 0.5
   */
  preclaimMaxAgeFraction?: number;
}

/** Default `leaseMs`: the default retry window plus 5 × 7.5 s of handler time (see `leaseMs`). */
export const DEFAULT_LEASE_MS = Math.ceil(maxRetryWaitMs(DEFAULT_RETRY_OPTIONS) + (DEFAULT_RETRY_OPTIONS.maxRetries + 1) * 7_500);

/** Defaults of {@link DeduplicatorOptions}. */
export const DEFAULT_DEDUPLICATOR_OPTIONS = {
  keyFactory: (msg: Message) => msg.uuid,
  service: "app",
  ttlMs: TTL_POLICY.defaultMs,
  leaseMs: DEFAULT_LEASE_MS,
  timeoutMs: 500,
  marking: "lease",
  logDuplicates: false,
  logger: (line: string) => console.warn(line),
  preclaimMaxAgeFraction: 0.5,
} as const satisfies Omit<Required<DeduplicatorOptions>, "repository" | "registry" | "prefix">;

type Resolved = Omit<Required<DeduplicatorOptions>, "registry" | "prefix"> & Pick<DeduplicatorOptions, "registry" | "prefix">;

/** A store call that exceeded `timeoutMs`. */
export class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`dedup store call exceeded timeoutMs=${ms}`);
    this.name = "StoreTimeoutError";
  }
}

/**
 * Classifies a store failure for `deduplication_errors_total{reason}`: our timeout and
 * ETIMEDOUT → `redis_timeout`; everything else from the store (refused, closed, max retries
 * per request, reply errors) → `redis_conn`. Key-factory failures are `marshal` (not from here).
 */
export function classifyStoreError(e: unknown): DedupErrorReason {
  if (e instanceof StoreTimeoutError) return "redis_timeout";
  if (e instanceof DedupStoreError) return e.reason;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) return "redis_timeout";
  return "redis_conn";
}

function timed<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new StoreTimeoutError(ms)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

function validate(o: Resolved): void {
  const bad = (name: string, range: string) => new RangeError(`deduplicator: ${name} must be ${range}`);
  if (!o.repository || typeof o.repository.claim !== "function") throw bad("repository", "a DedupRepository (RedisRepository, MemoryRepository)");
  if (!(Number.isFinite(o.ttlMs) && o.ttlMs >= 1 && o.ttlMs <= 365 * TTL_POLICY.defaultMs)) throw bad("ttlMs", "in [1, 365 days] ms (spec §3: ≥ 10 min in production)");
  if (!(Number.isFinite(o.leaseMs) && o.leaseMs >= 1 && o.leaseMs <= o.ttlMs)) throw bad("leaseMs", "in [1, ttlMs] ms");
  if (!(Number.isFinite(o.timeoutMs) && o.timeoutMs >= 1 && o.timeoutMs <= 60_000)) throw bad("timeoutMs", "in [1, 60000] ms (one store call, not the window)");
  if (!["lease", "release", "naive"].includes(o.marking)) throw bad("marking", '"lease", "release" or "naive"');
  if (!(o.preclaimMaxAgeFraction > 0 && o.preclaimMaxAgeFraction <= 1)) throw bad("preclaimMaxAgeFraction", "in (0, 1]");
  if (!/^[^\s:]+$/.test(o.service)) throw bad("service", "non-empty, without spaces or ':'");
  if (o.prefix !== undefined && (o.prefix === "" || /\s/.test(o.prefix))) throw bad("prefix", "non-empty without spaces");
}

interface PreClaim {
  key: string;
  value: string;
  /** null = claimed by us; string = existing value; undefined = unknown (the batch failed or timed out). */
  reply: string | null | undefined;
  at: number;
}

/** A `done` mark deferred to the batch's settle. */
interface PendingMark {
  key: string;
  value: string;
  topic: string;
  handler: string;
}

/** Per Router batch: the deferred `done` marks, and the keys that succeeded earlier in the batch. */
interface BatchState {
  marks: PendingMark[];
  doneKeys: Set<string>;
}

/**
 * What this Deduplicator keeps per delivery, stored on the delivery's own `context` under a
 * per-instance symbol (cheaper than WeakMaps on the hot path, and gone with the delivery).
 */
interface DeliveryState {
  /** Metrics: the delivery ended in success or deduplicated (not error). */
  final: boolean;
  errorCounted: boolean;
  /** onSettled registered (or found unavailable). */
  tracked: boolean;
  routed: boolean;
  pre?: PreClaim;
  batch?: BatchState;
}

const PROCESS_TAG = randomBytes(6).toString("base64url");
let seq = 0;
const NOOP_PREPARATION: BatchPreparation = { discard: async () => undefined };

/** The Deduplicator as an object (the middleware is `dedup.middleware`); see {@link deduplicator}. */
export class Deduplicator {
  readonly options: Readonly<Resolved>;
  private readonly rec: DedupRecorder;
  private readonly prefixes = new Map<string, string>();
  private readonly slot = Symbol("deduplicator");
  private readonly claimTtl: number;
  /** The repository never waits on I/O: no timeout timer per call. */
  private readonly inProcess: boolean;
  private readonly closed: boolean;

  constructor(options: DeduplicatorOptions) {
    const o = { ...DEFAULT_DEDUPLICATOR_OPTIONS, ...options } as Resolved;
    validate(o);
    this.options = o;
    this.rec = dedupRecorder(o.registry, o.service);
    this.claimTtl = o.marking === "lease" ? o.leaseMs : o.ttlMs;
    this.closed = o.repository.failureMode === "closed";
    this.inProcess = o.repository.inProcess === true;
  }

  private stateOf(msg: Message): DeliveryState {
    const ctx = msg.context as Record<symbol, DeliveryState | undefined>;
    let s = ctx[this.slot];
    if (!s) {
      s = { final: false, errorCounted: false, tracked: false, routed: false };
      ctx[this.slot] = s;
    }
    return s;
  }

  /** A store call bounded by `timeoutMs` (not for in-process repositories, which cannot block). */
  private timed<T>(p: Promise<T>): Promise<T> {
    return this.inProcess ? p : timed(p, this.options.timeoutMs);
  }

  /** The middleware (with its batch hook). */
  readonly middleware: Middleware = namedMiddleware(
    "deduplicator",
    (next) => (msg) => this.handle(next, msg),
    { prepareBatch: (msgs) => this.prepareBatch(msgs) },
  );

  /** The full repository key of `msg`: `<prefix>:<keyFactory(msg)>`. Throws what the key factory throws. */
  keyOf(msg: Message): string {
    const k = this.options.keyFactory(msg);
    if (typeof k !== "string" || k === "") throw new Error("keyFactory returned an empty or non-string key");
    return `${this.prefixOf(msg)}:${k}`;
  }

  /** The key prefix for a message's handler: `<service>:dedup:<handler>` (spec §2). */
  prefixOf(msg: Message): string {
    if (this.options.prefix) return this.options.prefix;
    const handler = msg.context.handler ?? "default";
    let p = this.prefixes.get(handler);
    if (p === undefined) {
      p = `${this.options.service}:dedup:${handler}`;
      this.prefixes.set(handler, p);
    }
    return p;
  }

  private newValue(): string {
    const m = this.options.marking;
    if (m === "naive") return NAIVE_VALUE;
    const token = PROCESS_TAG + (seq++).toString(36);
    return (m === "lease" ? PROCESSING_PREFIX : CLAIMED_PREFIX) + token;
  }

  private track(msg: Message, topic: string, handler: string): DeliveryState | undefined {
    if (!this.options.registry) return undefined;
    const st = this.stateOf(msg);
    if (st.tracked) return st;
    st.tracked = true;
    st.routed = typeof msg.context.onSettled === "function";
    if (st.routed) {
      msg.context.onSettled!(() => {
        if (!st.final) this.rec.result(topic, handler, "error");
      });
    }
    return st;
  }

  private handle(next: Handler, msg: Message): Promise<void | Message[]> {
    const topic = msg.context.topic ?? "";
    const handler = msg.context.handler ?? "default";
    const st = this.track(msg, topic, handler);
    // Under a Router the error result is counted at settle; only without one is a catch needed here.
    if (!st || st.routed) return this.check(next, msg, topic, handler, st);
    return this.checkCountingErrors(next, msg, topic, handler, st);
  }

  private async checkCountingErrors(next: Handler, msg: Message, topic: string, handler: string, st: DeliveryState): Promise<void | Message[]> {
    try {
      return await this.check(next, msg, topic, handler, st);
    } catch (e) {
      if (!st.final && !st.errorCounted) {
        st.errorCounted = true;
        this.rec.result(topic, handler, "error");
      }
      throw e;
    }
  }

  private async check(next: Handler, msg: Message, topic: string, handler: string, st: DeliveryState | undefined): Promise<void | Message[]> {
    const o = this.options;
    let key: string;
    try {
      key = this.keyOf(msg);
    } catch (e) {
      this.rec.error("marshal");
      if (this.closed) throw new DedupStoreError("marshal", `dedup key of message ${msg.uuid} could not be computed: ${(e as Error)?.message ?? e}`, { cause: e });
      return this.passThrough(next, msg, topic, handler, st);
    }

    const slot = (msg.context as Record<symbol, DeliveryState | undefined>)[this.slot];
    const batch = slot?.batch;
    if (batch?.doneKeys.has(key)) return this.swallow(msg, key, topic, handler, st);

    let value: string;
    let reply: string | null;
    const pre = slot?.pre;
    if (pre) slot.pre = undefined;
    if (pre && pre.key === key && pre.reply !== undefined && Date.now() - pre.at <= this.claimTtl * o.preclaimMaxAgeFraction) {
      value = pre.value;
      reply = pre.reply;
    } else {
      // A stale or unknown pre-claim is re-checked under the same token, so our own claim is recognised.
      value = pre && pre.key === key ? pre.value : this.newValue();
      const t0 = performance.now();
      try {
        reply = await this.timed(o.repository.claim(key, value, this.claimTtl));
      } catch (e) {
        this.rec.checkSeconds((performance.now() - t0) / 1000);
        return this.storeFailed(e, `claim of ${key}`, next, msg, topic, handler, st);
      }
      this.rec.checkSeconds((performance.now() - t0) / 1000);
      if (reply !== null && reply === value && o.marking !== "naive") {
        if (o.marking === "lease") await this.renew(key, value);
        reply = null;
      }
    }

    if (reply !== null) {
      if (o.marking === "lease" && reply.startsWith(PROCESSING_PREFIX)) {
        this.rec.inProgress(topic, handler);
        throw new InProgressError(key);
      }
      return this.swallow(msg, key, topic, handler, st);
    }

    let out: void | Message[];
    try {
      out = await next(msg);
    } catch (e) {
      if (o.marking !== "naive") await this.release(key, value, topic, handler);
      throw e;
    }
    if (batch) {
      // Inside a Router batch the `done` mark is deferred to the batch's settle(), which runs before
      // deliverBatch resolves, i.e. before the transport commits: one round trip for all marks of
      // the batch. A later copy of this key in the same batch is swallowed via doneKeys.
      batch.doneKeys.add(key);
      if (o.marking === "lease") batch.marks.push({ key, value, topic, handler });
    } else if (o.marking === "lease") await this.complete(key, value, topic, handler);
    if (st) st.final = true;
    this.rec.result(topic, handler, "success");
    return out;
  }

  private swallow(msg: Message, key: string, topic: string, handler: string, st: DeliveryState | undefined): undefined {
    if (st) st.final = true;
    this.rec.result(topic, handler, "deduplicated");
    if (this.options.logDuplicates) this.options.logger(`[dedup] duplicate swallowed: handler=${handler} topic=${topic} uuid=${msg.uuid} key=${key}`);
    return undefined;
  }

  private async passThrough(next: Handler, msg: Message, topic: string, handler: string, st: DeliveryState | undefined): Promise<void | Message[]> {
    const out = await next(msg);
    if (st) st.final = true;
    this.rec.result(topic, handler, "success");
    return out;
  }

  private storeFailed(e: unknown, what: string, next: Handler, msg: Message, topic: string, handler: string, st: DeliveryState | undefined): Promise<void | Message[]> {
    const reason = classifyStoreError(e);
    this.rec.error(reason);
    if (this.closed) {
      throw new DedupStoreError(reason, `dedup store failed (${reason}) on ${what}: ${(e as Error)?.message ?? e}; fail-closed, so the message is retried and then poisoned`, { cause: e });
    }
    return this.passThrough(next, msg, topic, handler, st);
  }

  private async renew(key: string, value: string): Promise<void> {
    try {
      await this.timed(this.options.repository.compareAndSet(key, value, value, this.options.leaseMs));
    } catch (e) {
      this.rec.error(classifyStoreError(e));
    }
  }

  /** Lease marking, after success: processing:<token> → done for ttlMs; if the lease was lost, still record done unless another consumer holds the key. */
  private async complete(key: string, value: string, topic: string, handler: string): Promise<void> {
    const { repository, ttlMs, logger } = this.options;
    try {
      if (await this.timed(repository.compareAndSet(key, value, DONE_VALUE, ttlMs))) return;
      await this.markAfterLostLease(key, topic, handler);
    } catch (e) {
      // The handler already succeeded: do not fail the delivery (that would run it again now); the
      // lease expires and only a redelivery after leaseMs could repeat it (spec §5 covers that).
      this.rec.error(classifyStoreError(e));
      logger(`[dedup] could not mark ${key} done: ${(e as Error)?.message ?? e}`);
    }
  }

  /** Our compare-and-set failed: record `done` if the key is free, else count the lost lease. */
  private async markAfterLostLease(key: string, topic: string, handler: string): Promise<void> {
    const { repository, ttlMs, logger } = this.options;
    const now = await this.timed(repository.claim(key, DONE_VALUE, ttlMs));
    if (now === null || now === DONE_VALUE) return;
    this.rec.leaseLost(topic, handler);
    logger(`[dedup] lease of ${key} expired during the handler and another consumer took it over: the message may run twice (raise leaseMs)`);
  }

  /** The deferred `done` marks of a batch: one `compareAndSetBatch` when the repository has it. */
  private async completeMany(marks: readonly PendingMark[]): Promise<void> {
    if (marks.length === 0) return;
    const { repository, ttlMs, logger } = this.options;
    if (!repository.compareAndSetBatch) {
      await Promise.all(marks.map((m) => this.complete(m.key, m.value, m.topic, m.handler)));
      return;
    }
    let ok: boolean[];
    try {
      ok = await this.timed(repository.compareAndSetBatch(marks.map((m) => ({ key: m.key, expected: m.value, value: DONE_VALUE, ttlMs }))));
    } catch (e) {
      this.rec.error(classifyStoreError(e));
      logger(`[dedup] could not mark ${marks.length} keys done: ${(e as Error)?.message ?? e}; their leases expire after ${this.claimTtl} ms`);
      return;
    }
    await Promise.all(
      marks.map((m, i) =>
        ok[i]
          ? undefined
          : this.markAfterLostLease(m.key, m.topic, m.handler).catch((e: unknown) => {
              this.rec.error(classifyStoreError(e));
            }),
      ),
    );
  }

  private async release(key: string, value: string, topic: string, handler: string): Promise<void> {
    try {
      if (await this.timed(this.options.repository.compareAndDelete(key, value))) this.rec.released(topic, handler);
    } catch (e) {
      this.rec.error(classifyStoreError(e));
      this.options.logger(`[dedup] could not release ${key} after a handler failure (${(e as Error)?.message ?? e}); it frees itself after ${this.claimTtl} ms`);
    }
  }

  /**
   * The batch hook (Router `deliverBatch`): claims every message's key in ONE `claimBatch` round
   * trip and remembers each reply for the per-message path. Not used by `"naive"` (Watermill claims
   * right before the handler). Never throws: a failed batch leaves each message to claim itself
   * (under the same token, so a claim that did land is recognised as ours).
   */
  async prepareBatch(msgs: readonly Message[]): Promise<BatchPreparation> {
    const o = this.options;
    if (o.marking === "naive" || msgs.length === 0) return NOOP_PREPARATION;
    const reqs: ClaimRequest[] = [];
    const owners: Message[] = [];
    const seen = new Set<string>();
    for (const m of msgs) {
      let key: string;
      try {
        key = this.keyOf(m);
      } catch {
        continue; // the per-message path counts `marshal` and applies the failure mode
      }
      // A second copy of a key in the same batch claims at its turn, after the first copy finished:
      // pre-claimed now it would see the first copy's lease and fail as in-progress.
      if (seen.has(key)) continue;
      seen.add(key);
      reqs.push({ key, value: this.newValue(), ttlMs: this.claimTtl });
      owners.push(m);
    }
    if (reqs.length === 0) return NOOP_PREPARATION;
    const t0 = performance.now();
    let replies: Array<string | null | Error> | undefined;
    try {
      replies = await this.timed(o.repository.claimBatch(reqs));
    } catch (e) {
      this.rec.error(classifyStoreError(e));
    }
    this.rec.checkSeconds((performance.now() - t0) / 1000);
    const at = Date.now();
    const batch: BatchState = { marks: [], doneKeys: new Set() };
    owners.forEach((m, i) => {
      const r = replies?.[i];
      const req = reqs[i]!;
      this.stateOf(m).pre = { key: req.key, value: req.value, reply: r instanceof Error ? undefined : r, at };
    });
    for (const m of msgs) this.stateOf(m).batch = batch;
    return {
      settle: async () => {
        for (const m of msgs) this.stateOf(m).batch = undefined;
        await this.completeMany(batch.marks);
      },
      discard: async (notRun) => {
        const releases: Promise<unknown>[] = [];
        for (const m of notRun) {
          const st = this.stateOf(m);
          const p = st.pre;
          if (!p) continue;
          st.pre = undefined;
          if (p.reply === null || p.reply === undefined) {
            releases.push(this.timed(o.repository.compareAndDelete(p.key, p.value)).catch((e: unknown) => this.rec.error(classifyStoreError(e))));
          }
        }
        await Promise.all(releases);
      },
    };
  }
}

/**
 * The Deduplicator middleware: the last in the stack, right before the handler (spec §2, §10).
 * A repeat of a processed message is swallowed (ack, handler not called); a failed attempt releases
 * its key so Retry and redelivery run the handler again; see {@link Marking}.
 */
export function deduplicator(options: DeduplicatorOptions): Middleware {
  return new Deduplicator(options).middleware;
}
