/**
 * Error classes that steer control flow through the stack (like BullMQ's `UnrecoverableError`).
 */
import { DEDUP_ERROR_REASON, type DedupErrorReason } from "../../names/dedup";

/**
 * Thrown by a handler (or middleware) to say that retrying cannot help: Retry stops at once and
 * the error goes on to PoisonQueue. Wrap the real cause: `throw new NonRetryableError("bad payload", { cause })`.
 */
export class NonRetryableError extends Error {
  /** Always false; read by `retry` and transports. */
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}

/**
 * Thrown by the Deduplicator (marking `"lease"`) when another consumer holds the key in
 * `processing` state right now. **Retryable**: the message is neither a duplicate nor ours to
 * process yet; Retry tries again and, if the owner crashed, the lease expires and a later attempt or
 * redelivery processes it. If the owner succeeds, the next attempt is swallowed as a duplicate.
 */
export class InProgressError extends Error {
  readonly retryable = true;
  /** The repository key, `<service>:dedup:<handler>:<key>`. */
  readonly key: string;
  constructor(key: string) {
    super(
      `dedup key ${key} is being processed by another consumer; retry later (its lease expires if that consumer crashed)`,
    );
    this.name = "InProgressError";
    this.key = key;
  }
}

/**
 * A failed store call or key computation, classified by `reason`: `redis_timeout` (slower than
 * `timeoutMs`), `redis_conn` (connection refused/closed, or any other store error), `marshal`
 * (the key factory threw: the message cannot be keyed). Under fail-closed the Deduplicator throws
 * it (retryable unless `marshal`, which retrying cannot fix).
 */
export class DedupStoreError extends Error {
  readonly reason: DedupErrorReason;
  readonly retryable: boolean;
  constructor(reason: DedupErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DedupStoreError";
    this.reason = reason;
    this.retryable = reason !== DEDUP_ERROR_REASON.marshal;
  }
}

/** Turns any thrown value into an `Error` (non-errors are wrapped, their value kept as `cause`). */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return new Error(`non-Error thrown: ${text}`, { cause: value });
}

/**
 * A copy whose key is `done` but whose payload differs from the payload that was processed (the
 * fingerprint stored in the `done` value): a publisher that reused a message UUID for another
 * message — swallowing it would lose that message. Not retryable (the stored fingerprint will not
 * change); PoisonQueue sends it to the DLQ with `reason_poisoned` class `payload_conflict`.
 * Thrown by the Deduplicator under `onPayloadConflict: "poison"` (the default).
 */
export class PayloadConflictError extends NonRetryableError {
  constructor(
    /** The repository key of the message. */
    readonly key: string,
    /** The fingerprint stored with `done`, and this copy's. */
    readonly stored: string,
    readonly received: string,
  ) {
    super(
      `payload conflict on ${key}: the message UUID was processed with another payload (fingerprint ${stored}, this copy ${received}); the publisher reuses UUIDs — fix it and re-publish this message with a new UUID`,
    );
    this.name = "PayloadConflictError";
  }
}

/**
 * The reason `msg.signal` aborts when the Deduplicator's lease heartbeat (option `heartbeat`) can
 * no longer vouch for the claim: `"taken"` — a renewal found the key held by another consumer (or
 * already done), so the message may be running twice; `"max-lease"` — the handler ran past
 * `maxLeaseMs` and the claim is left to expire. **Retryable**: the next attempt meets the other
 * consumer's lease or its `done` mark. A handler that passes `msg.signal` to its slow calls stops early.
 */
export class LeaseLostError extends Error {
  readonly retryable = true;
  /** The repository key, `<service>:dedup:<handler>:<key>`. */
  readonly key: string;
  /** Why: the claim was taken over, or `maxLeaseMs` was reached. */
  readonly why: "taken" | "max-lease";
  constructor(key: string, why: "taken" | "max-lease", maxLeaseMs?: number) {
    super(
      why === "taken"
        ? `lease of ${key} was taken over by another consumer while the handler ran (the process stalled past leaseMs?); stop the side effect, the other consumer owns the message`
        : `handler held ${key} past maxLeaseMs ${maxLeaseMs}: its claim is left to expire; make it faster or raise maxLeaseMs`,
    );
    this.name = "LeaseLostError";
    this.key = key;
    this.why = why;
  }
}
