import type { Registry } from "prom-client";
import type { Message } from "../message";
import { TTL_POLICY } from "../../../names/keys";
import type { DedupRepository, FailureMode } from "../repository/repository";
import { DEFAULT_RETRY_OPTIONS, maxRetryWaitMs } from "../middleware/retry";
import type { HotKeysBoard } from "../metrics/hot-keys-board";
import type { FingerprintOptions } from "./payload-fingerprint";

/**
 * How the Deduplicator marks a key (spec §10):
 * - `"lease"` (default, loses nothing): claim `processing:<token>` for `leaseMs`; on success set
 *   `done:<topic>:<partition>:<offset>` (the delivery's position; plain `done` without one) for
 *   `ttlMs` if still ours (compare-and-set); on failure delete it if still ours
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
  /** The store (`RedisRepository` in production, `MemoryRepository` for one process). Required. */
  repository: DedupRepository;
  /**
   * What happens when a store call fails or exceeds `timeoutMs` (spec §4): `"open"` lets the
   * message through to the handler unchecked (a repeat can reach it, so it must be idempotent
   * itself); `"closed"` fails the attempt with `DedupStoreError`, so Retry runs again and then
   * PoisonQueue sends it to the DLQ. Both count `deduplication_errors_total`.
   * @default the repository's `failureMode` (set by `failOpen` / `failClosed`), else "open"
   */
  failureMode?: FailureMode;
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
  /**
   * `"lease"` only: renew the claim every `leaseMs / 3` while the handler runs, so a handler may run
   * longer than `leaseMs` (and `timeout` need not stay below it) without a second consumer taking
   * the key. A renewal that finds the key taken (the process stalled past the lease: a long GC pause,
   * SIGSTOP, a frozen VM) aborts the handler through `msg.signal` with `LeaseLostError` and counts
   * `deduplication_lease_lost_total`. A handler faster than `leaseMs / 3` makes no extra store call.
   * @default false
   */
  heartbeat?: boolean;
  /**
   * With `heartbeat`: the longest the heartbeat keeps one handler run's claim, ms. Past it the claim
   * is no longer renewed (it expires at most `maxLeaseMs` after the start, so a stuck handler cannot
   * hold a key for ever) and `msg.signal` aborts with `LeaseLostError` (`why: "max-lease"`).
   * @default 10 × leaseMs
   */
  maxLeaseMs?: number;
  /** Time limit of ONE store call (not the window: spec §10); slower counts as `redis_timeout`. @default 500 */
  timeoutMs?: number;
  /** Marking protocol. @default "lease" */
  marking?: Marking;
  /**
   * Log swallowed duplicates through `logger`: `true` every copy, `"sampled"` the 1st, 10th, 100th…
   * copy of a key within the hot-key window (a storm of 500 copies of one UUID logs 3 lines, every
   * repeated UUID at least one), `false` none. @default false
   */
  logDuplicates?: boolean | "sampled";
  /**
   * Where this Deduplicator's hot-key sketch (the most swallowed UUIDs per handler, fixed memory;
   * `./hot-keys`) is kept for the dashboard; `null` keeps none. @default hotKeysBoard() (the process's)
   */
  hotKeys?: HotKeysBoard | null;
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
  /**
   * `"lease"` only: what to do with a copy whose UUID is `done` but whose payload differs from the
   * one processed (the fingerprint stored in the `done` value) — a publisher that reuses UUIDs.
   * Both count `deduplication_payload_conflicts_total{service,handler}`. `"poison"` fails the copy
   * with `PayloadConflictError` (not retried): PoisonQueue sends it to the DLQ with `reason_poisoned`
   * class `payload_conflict`, so the other message is kept. `"swallow"` acks it as a duplicate (the
   * behaviour without fingerprints: that message is lost). Each handler's stack has its own
   * Deduplicator, so each handler chooses.
   * @default "poison"
   */
  onPayloadConflict?: PayloadConflictAction;
  /**
   * `"lease"` only: which fields of a JSON payload make the fingerprint a copy is compared by —
   * JSON Pointers (RFC 6901), `exclude` removed first, then only `include` kept — over canonical
   * JSON (sorted keys, no whitespace), so a producer retry that re-serialises the event with a new
   * `sentAt` (`{ exclude: ["/sentAt"] }`) is a repeat, not a conflict. **A payload that is not
   * UTF-8 JSON falls back to its bytes' fingerprint**; a conflict it meets is counted with
   * `difference="bytes"` (chosen fields: `"fields"`). Costs one `JSON.parse` per success and per
   * repeat. Malformed pointers throw a RangeError. @default the payload's bytes
   */
  fingerprint?: FingerprintOptions;
}

/** What the Deduplicator does with a copy whose payload conflicts with the processed one ({@link DeduplicatorOptions.onPayloadConflict}). */
export type PayloadConflictAction = "poison" | "swallow";

/** Default `leaseMs`: the default retry window plus 5 × 7.5 s of handler time (see `leaseMs`). */
export const DEFAULT_LEASE_MS = Math.ceil(
  maxRetryWaitMs(DEFAULT_RETRY_OPTIONS) + (DEFAULT_RETRY_OPTIONS.maxRetries + 1) * 7_500,
);

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
  onPayloadConflict: "poison",
  heartbeat: false,
} as const satisfies Omit<
  Required<DeduplicatorOptions>,
  "repository" | "registry" | "prefix" | "failureMode" | "hotKeys" | "maxLeaseMs" | "fingerprint"
>;

/** Options after defaults (`hotKeys` undefined = the process's board). */
export type ResolvedDeduplicatorOptions = Omit<
  Required<DeduplicatorOptions>,
  "registry" | "prefix" | "hotKeys" | "fingerprint"
> &
  Pick<DeduplicatorOptions, "registry" | "prefix" | "hotKeys" | "fingerprint">;

/**
 * Validates merged options; throws a RangeError naming the option. `repositoryMode` is the
 * repository's own `failureMode` (from `failOpen` / `failClosed`): it must not contradict the option.
 */
export function validateDeduplicatorOptions(o: ResolvedDeduplicatorOptions, repositoryMode?: FailureMode): void {
  const bad = (name: string, range: string) => new RangeError(`deduplicator: ${name} must be ${range}`);
  if (!o.repository || typeof o.repository.claim !== "function")
    throw bad("repository", "a DedupRepository (RedisRepository, MemoryRepository)");
  if (!(Number.isFinite(o.ttlMs) && o.ttlMs >= 1 && o.ttlMs <= 365 * TTL_POLICY.defaultMs))
    throw bad("ttlMs", "in [1, 365 days] ms (spec §3: ≥ 10 min in production)");
  if (!(Number.isFinite(o.leaseMs) && o.leaseMs >= 1 && o.leaseMs <= o.ttlMs)) throw bad("leaseMs", "in [1, ttlMs] ms");
  if (typeof o.heartbeat !== "boolean") throw bad("heartbeat", "true or false");
  if (!(Number.isFinite(o.maxLeaseMs) && o.maxLeaseMs >= o.leaseMs))
    throw bad("maxLeaseMs", `a number of ms ≥ leaseMs (${o.leaseMs})`);
  if (!(Number.isFinite(o.timeoutMs) && o.timeoutMs >= 1 && o.timeoutMs <= 60_000))
    throw bad("timeoutMs", "in [1, 60000] ms (one store call, not the window)");
  if (!["lease", "release", "naive"].includes(o.marking)) throw bad("marking", '"lease", "release" or "naive"');
  if (o.failureMode !== "open" && o.failureMode !== "closed") throw bad("failureMode", '"open" or "closed"');
  if (repositoryMode !== undefined && repositoryMode !== o.failureMode) {
    throw bad(
      "failureMode",
      `"${repositoryMode}" like its repository (fail${repositoryMode === "open" ? "Open" : "Closed"}(repository)), or leave one of the two unset`,
    );
  }
  if (o.logDuplicates !== true && o.logDuplicates !== false && o.logDuplicates !== "sampled")
    throw bad("logDuplicates", 'true, false or "sampled"');
  if (o.onPayloadConflict !== "poison" && o.onPayloadConflict !== "swallow")
    throw bad("onPayloadConflict", '"poison" or "swallow"');
  if (!(o.preclaimMaxAgeFraction > 0 && o.preclaimMaxAgeFraction <= 1))
    throw bad("preclaimMaxAgeFraction", "in (0, 1]");
  if (!/^[^\s:]+$/.test(o.service)) throw bad("service", "non-empty, without spaces or ':'");
  if (o.prefix !== undefined && (o.prefix === "" || /\s/.test(o.prefix)))
    throw bad("prefix", "non-empty without spaces");
}
