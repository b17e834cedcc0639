/**
 * The `done` value: the first delivery's position and the fingerprint of the payload it processed.
 * What a swallowed copy was (`messages_duplicates_by_cause_total`): the same position → a
 * redelivery (retry, rebalance, restart before the commit re-read it), another position → a
 * re-publish (producer retry, outbox forwarder, DLQ replay), no position on either side → unknown.
 * Whether a copy is the same message at all: its payload fingerprint against the stored one
 * (`deduplication_payload_conflicts_total`).
 */
import { hash } from "node:crypto";
import type { DeliveryContext, Message } from "./message";
import { DUPLICATE_CAUSE, type DuplicateCause } from "../../names/dedup";
import { DONE_FINGERPRINT_SEPARATOR, DONE_POSITION_PREFIX, DONE_VALUE } from "./repository";

/**
 * Characters of a payload fingerprint: 7 base64url characters = 42 bits of SHA-256. Seven, not
 * eight: `done#` + 7 characters is the longest value whose Redis string object still fits the
 * allocation of a plain `done` (jemalloc's 32-byte class), so a key without a position costs
 * nothing more (`npm run bench:memory`; eight characters measured +15.7 B/key).
 */
export const FINGERPRINT_LENGTH = 7;

/**
 * A short fingerprint of a payload: the first 42 bits of its SHA-256, as 7 base64url characters.
 * Two different payloads share one with probability 2⁻⁴² — a missed conflict, never a false one
 * (equal payloads always have equal fingerprints).
 */
export function payloadFingerprint(payload: Uint8Array): string {
  return payload.length === 0 ? EMPTY_FINGERPRINT : hash("sha256", payload, "base64url").slice(0, FINGERPRINT_LENGTH);
}

/** The fingerprint of an empty payload (a Kafka tombstone's, say): the same 7 characters, computed once. */
const EMPTY_FINGERPRINT = hash("sha256", new Uint8Array(0), "base64url").slice(0, FINGERPRINT_LENGTH);

/**
 * The delivery's position `topic:partition:offset`, or undefined when the transport gave none
 * (all three are needed: an offset alone is ambiguous across partitions).
 */
export function positionOf(ctx: DeliveryContext): string | undefined {
  const { topic, partition, offset } = ctx;
  if (topic === undefined || topic === "" || partition === undefined || offset === undefined || offset === "")
    return undefined;
  return `${topic}:${partition}:${offset}`;
}

/**
 * The `done` value for a delivery at `position` that processed a payload with `fingerprint`:
 * `done:<position>#<fingerprint>`, `done#<fingerprint>` without a position; without a fingerprint
 * (the forms written before fingerprints) `done:<position>` or plain `done`.
 */
export function doneValue(position: string | undefined, fingerprint?: string): string {
  const base = position === undefined ? DONE_VALUE : DONE_POSITION_PREFIX + position;
  return fingerprint === undefined ? base : base + DONE_FINGERPRINT_SEPARATOR + fingerprint;
}

/**
 * The `done` value of a delivery that succeeded: its position — a later copy at the same position
 * is a redelivery, at another a re-publish — and, with `fingerprint` (the lease marking), its
 * payload's fingerprint: a later copy with another payload is a reused UUID, not a repeat.
 */
export function doneValueOf(msg: Message, fingerprint: boolean): string {
  return doneValue(positionOf(msg.context), fingerprint ? payloadFingerprint(msg.payload) : undefined);
}

/** True when `stored` is a `done` value (plain, with a position, with a fingerprint). */
export function isDoneValue(stored: string): boolean {
  return (
    stored === DONE_VALUE ||
    stored.startsWith(DONE_POSITION_PREFIX) ||
    stored.startsWith(DONE_VALUE + DONE_FINGERPRINT_SEPARATOR)
  );
}

/** The payload fingerprint a `done` value carries, or undefined (older values, other markings). */
export function storedFingerprint(stored: string): string | undefined {
  const n = stored.length - FINGERPRINT_LENGTH - 1;
  if (n < DONE_VALUE.length || stored.charCodeAt(n) !== 35 /* "#" */ || !isDoneValue(stored)) return undefined;
  return stored.slice(n + 1);
}

/**
 * What a swallowed copy at `position` was, given the key's stored value: `redelivery` when the
 * stored `done` value names the same position, `republish` when it names another, `unknown` when
 * either has none (plain `done`, `claimed:<token>`, the naive `1`, a message without a position).
 */
export function duplicateCause(stored: string | undefined, position: string | undefined): DuplicateCause {
  if (stored === undefined || position === undefined || !stored.startsWith(DONE_POSITION_PREFIX))
    return DUPLICATE_CAUSE.unknown;
  const p = DONE_POSITION_PREFIX.length;
  const end = storedFingerprint(stored) === undefined ? stored.length : stored.length - FINGERPRINT_LENGTH - 1;
  // Compare without slicing: stored === "done:" + position (+ "#" + fingerprint).
  return end - p === position.length && stored.startsWith(position, p)
    ? DUPLICATE_CAUSE.redelivery
    : DUPLICATE_CAUSE.republish;
}
