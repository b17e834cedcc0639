/**
 * The `done` value with the first delivery's position, and what a swallowed copy was
 * (`messages_duplicates_by_cause_total`): the same position → a redelivery (retry, rebalance,
 * restart before the commit re-read it), another position → a re-publish (producer retry, outbox
 * forwarder, DLQ replay), no position on either side → unknown.
 */
import type { DeliveryContext } from "./message";
import { DUPLICATE_CAUSE, type DuplicateCause } from "../../names/dedup";
import { DONE_POSITION_PREFIX, DONE_VALUE } from "./repository";

/**
 * The delivery's position `topic:partition:offset`, or undefined when the transport gave none
 * (all three are needed: an offset alone is ambiguous across partitions).
 */
export function positionOf(ctx: DeliveryContext): string | undefined {
  const { topic, partition, offset } = ctx;
  if (topic === undefined || topic === "" || partition === undefined || offset === undefined || offset === "") return undefined;
  return `${topic}:${partition}:${offset}`;
}

/** The `done` value for a delivery at `position`: `done:<position>`, or plain `done` without one. */
export function doneValue(position: string | undefined): string {
  return position === undefined ? DONE_VALUE : DONE_POSITION_PREFIX + position;
}

/** True when `stored` is a `done` value (plain or with a position). */
export function isDoneValue(stored: string): boolean {
  return stored === DONE_VALUE || stored.startsWith(DONE_POSITION_PREFIX);
}

/**
 * What a swallowed copy at `position` was, given the key's stored value: `redelivery` when the
 * stored `done` value names the same position, `republish` when it names another, `unknown` when
 * either has none (plain `done`, `claimed:<token>`, the naive `1`, a message without a position).
 */
export function duplicateCause(stored: string | undefined, position: string | undefined): DuplicateCause {
  if (stored === undefined || position === undefined || !stored.startsWith(DONE_POSITION_PREFIX)) return DUPLICATE_CAUSE.unknown;
  // Compare without slicing: stored === "done:" + position.
  const p = DONE_POSITION_PREFIX.length;
  return stored.length === p + position.length && stored.endsWith(position) ? DUPLICATE_CAUSE.redelivery : DUPLICATE_CAUSE.republish;
}
