/**
 * Every form of the stored dedup value, written once: `done` (with the first delivery's position and
 * the payload fingerprint), `processing:<token>`, `claimed:<token>` and the naive `1`; how to write
 * each, read it back ({@link parseClaimValue}) and what a swallowed copy was.
 *
 * The `done` value: the first delivery's position and the fingerprint of the payload it processed.
 * What a swallowed copy was (`messages_duplicates_by_cause_total`): the same position → a
 * redelivery (retry, rebalance, restart before the commit re-read it), another position → a
 * re-publish (producer retry, outbox forwarder, DLQ replay), no position on either side → unknown.
 * Whether a copy is the same message at all: its payload fingerprint against the stored one
 * (`deduplication_payload_conflicts_total`).
 */
import { hash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { DeliveryContext, Message } from "../message";
import { DUPLICATE_CAUSE, type DuplicateCause } from "../../../names/dedup";
import { CLAIM_OWNER_SEPARATOR } from "../../../names/keys";

/**
 * Value of a key whose handler succeeded (marking `"lease"`) when the delivery had no position
 * (a transport without partitions and offsets, e.g. `MemoryPubSub`), and of keys written before
 * positions were stored.
 */
export const DONE_VALUE = "done";
/**
 * Prefix of the `done` value that carries the first delivery's position:
 * `done:<topic>:<partition>:<offset>` (e.g. `done:demo.events:3:18244`). A swallowed copy at the same
 * position is a redelivery, at another a re-publish (`messages_duplicates_by_cause_total`).
 * Key browsers classify both forms as `done` ({@link parseClaimValue}).
 */
export const DONE_POSITION_PREFIX = "done:";
/**
 * Separator of the payload fingerprint at the end of a `done` value: `done:<position>#<fingerprint>`
 * or `done#<fingerprint>` (7 base64url characters, `payloadFingerprint`). Not a character of a
 * Kafka topic name nor of base64url, so the position and the fingerprint parse unambiguously.
 * Values written before fingerprints were stored (no `#`) stay readable: they are `done` without one.
 */
export const DONE_FINGERPRINT_SEPARATOR = "#";
/** Prefix of a key being processed under a lease: `processing:<token>`. */
export const PROCESSING_PREFIX = "processing:";
/** Prefix of a key claimed with marking `"release"`: `claimed:<token>` (kept for the whole window). */
export const CLAIMED_PREFIX = "claimed:";
/** Value written by marking `"naive"` (Watermill / the note): never released. */
export const NAIVE_VALUE = "1";

// `<hostname>-<pid>/<random>`: the owner lets a key browser tell a dead replica's lease from a live one's.
const PROCESS_TAG = `${hostname()}-${process.pid}${CLAIM_OWNER_SEPARATOR}${randomBytes(6).toString("base64url")}`;
let seq = 0;

/**
 * The claim values a Deduplicator writes: `processing:<process tag><n>` under lease marking,
 * `claimed:<process tag><n>` under release marking (tag: `<hostname>-<pid>/<random>`, n: a sequence
 * number of the process), {@link NAIVE_VALUE} under naive marking.
 */
export class ClaimTokens {
  private readonly prefix: string;

  constructor(private readonly marking: "lease" | "release" | "naive") {
    this.prefix = (marking === "lease" ? PROCESSING_PREFIX : CLAIMED_PREFIX) + PROCESS_TAG;
  }

  /** A new claim value (the same `1` each time under naive marking). */
  next(): string {
    return this.marking === "naive" ? NAIVE_VALUE : this.prefix + (seq++).toString(36);
  }
}

/** A stored dedup value, decoded (for the Deduplicator and the key browser). */
export type ClaimState =
  | {
      state: "done";
      /** `topic:partition:offset` of the first delivery; absent in a plain `done`. */
      position?: string;
      /** Fingerprint of the payload that was processed; absent in values written before fingerprints. */
      fingerprint?: string;
    }
  | { state: "processing"; token: string }
  | { state: "claimed"; token: string }
  | { state: "naive" }
  | { state: "unknown"; raw: string };

/** Decodes a stored value written by any marking. */
export function parseClaimValue(raw: string): ClaimState {
  if (isDoneValue(raw)) {
    const hash = raw.lastIndexOf(DONE_FINGERPRINT_SEPARATOR);
    const body = hash < 0 ? raw : raw.slice(0, hash);
    const out: ClaimState = { state: "done" };
    if (body.length > DONE_POSITION_PREFIX.length) out.position = body.slice(DONE_POSITION_PREFIX.length);
    if (hash >= 0) out.fingerprint = raw.slice(hash + 1);
    return out;
  }
  if (raw.startsWith(PROCESSING_PREFIX)) return { state: "processing", token: raw.slice(PROCESSING_PREFIX.length) };
  if (raw.startsWith(CLAIMED_PREFIX)) return { state: "claimed", token: raw.slice(CLAIMED_PREFIX.length) };
  if (raw === NAIVE_VALUE) return { state: "naive" };
  return { state: "unknown", raw };
}

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
