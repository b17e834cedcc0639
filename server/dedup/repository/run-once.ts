/**
 * Runs a side effect at most once per key that succeeded, with the Deduplicator's lease protocol
 * on any {@link DedupRepository}: claim `processing:<token>` for `leaseMs`, run, then `done` for
 * `ttlMs`; a failure releases the key so the next attempt runs again. Used for the ONE DLQ copy
 * per source record — the transports' copy of a record without a UUID (`dlqCopyKey`) and
 * PoisonQueue's copy of a handler failure (`poisonedCopyKey`) — when the same record is read
 * again after its copy was published but before its offset was committed.
 */
import { randomBytes } from "node:crypto";
import { InProgressError } from "../errors";
import { isDoneValue, DONE_VALUE, PROCESSING_PREFIX } from "./stored-value";
import { type DedupRepository } from "./repository";
import { withTimeout } from "./store-call";

/** What {@link runOnce} asks of a store: a {@link DedupRepository}'s claim, compare-and-* and optional done mark. */
export type RunOnceStore = Pick<DedupRepository, "claim" | "compareAndSet" | "compareAndDelete" | "markDone">;

/** Options of {@link runOnce}. */
export interface RunOnceOptions {
  /** How long a run in progress holds the key. @default 30000 */
  leaseMs?: number;
  /** How long a success is remembered. @default 7 days */
  ttlMs?: number;
  /**
   * Time limit of each store call, ms: a claim slower than this lets `fn` run unchecked (fail-open,
   * as a failed claim does), a slower `done` mark is given up. @default none (the store's own limits)
   */
  timeoutMs?: number;
}

/** Defaults of {@link RunOnceOptions}. */
export const DEFAULT_RUN_ONCE_OPTIONS = { leaseMs: 30_000, ttlMs: 7 * 24 * 3600_000 } as const satisfies Required<
  Omit<RunOnceOptions, "timeoutMs">
>;

/**
 * `"ran"`: `fn` ran and succeeded now; `"done"`: it had succeeded before (not run again).
 * Throws what `fn` throws (after releasing the key), or `InProgressError` when another run holds
 * the key (retry later). **At least once**: a success whose `done` mark then fails may run again,
 * and a store that cannot be reached (or answers after `timeoutMs`) lets `fn` run unchecked (fail-open).
 */
export async function runOnce(
  repository: RunOnceStore,
  key: string,
  fn: () => Promise<void>,
  options: RunOnceOptions = {},
): Promise<"ran" | "done"> {
  const o = { ...DEFAULT_RUN_ONCE_OPTIONS, ...options };
  const bounded = <T>(p: Promise<T>): Promise<T> =>
    o.timeoutMs === undefined
      ? p
      : withTimeout(p, o.timeoutMs, () => new Error(`runOnce: store call exceeded ${o.timeoutMs} ms`));
  const token = PROCESSING_PREFIX + randomBytes(6).toString("base64url");
  let held: string | null;
  try {
    held = await bounded(repository.claim(key, token, o.leaseMs));
  } catch {
    // Fail-open: a store outage must not block what the side effect guards (the DLQ copy).
    await fn();
    return "ran";
  }
  if (held !== null && held !== token) {
    if (isDoneValue(held)) return "done";
    throw new InProgressError(key);
  }
  try {
    await fn();
  } catch (e) {
    await bounded(repository.compareAndDelete(key, token)).catch(() => undefined);
    throw e;
  }
  try {
    if (repository.markDone) await bounded(repository.markDone(key, DONE_VALUE, o.ttlMs));
    else await bounded(repository.compareAndSet(key, token, DONE_VALUE, o.ttlMs));
  } catch {
    // Done already happened; the lease expires and a later read may run it once more.
  }
  return "ran";
}
