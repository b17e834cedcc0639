/**
 * The DLQ records' states as the DLQ browser, the re-drive, the discard and the backlog read them:
 * one read of a DLQ topic's low watermarks and of the resolutions at or above them
 * ({@link topicStates}), then a synchronous lookup per scanned record ({@link TopicStates.of}).
 */
import type { DlqEntry } from "@/lib/api/dlq";
import {
  dlqStateStore,
  noteResolved,
  positionKey,
  stateAt,
  type DlqRecordState,
  type DlqResolution,
  type DlqResolutionInput,
} from "./dlq-state";
import { isTopicMissing } from "./log-reader";
import { recordReader } from "./records";

/** One DLQ topic's resolutions within its retention, and its partitions' low watermarks. */
export interface TopicStates {
  lows: ReadonlyMap<number, bigint>;
  resolutions: ReadonlyMap<string, DlqResolution>;
  /** The state of the record at this position. */
  of(p: { partition: number; offset: string | bigint }): DlqRecordState;
}

/** Reads `dlqTopic`'s low watermarks (none for a topic not made yet) and its resolutions above them. */
export async function topicStates(dlqTopic: string): Promise<TopicStates> {
  const ranges = await recordReader()
    .ranges(dlqTopic)
    .catch((e: unknown) => {
      if (isTopicMissing(e)) return [];
      throw e;
    });
  const lows = new Map(ranges.map((r) => [r.partition, r.low] as const));
  const resolutions = await dlqStateStore().resolved(dlqTopic, lows);
  return {
    lows,
    resolutions,
    of: (p) =>
      stateAt(resolutions, { partition: p.partition, offset: p.offset.toString() }, lows.get(p.partition) ?? 0n),
  };
}

/** The entry's state and, when resolved, who, when and how (the API's shape). */
export function entryState(s: DlqRecordState): Pick<DlqEntry, "state" | "resolution"> {
  switch (s.state) {
    case "open":
    case "expired":
      return { state: s.state };
    case "redriven":
      return { state: s.state, resolution: { at: s.at, who: s.who, to: s.to } };
    case "discarded":
      return { state: s.state, resolution: { at: s.at, who: s.who, why: s.why } };
  }
}

/** Whether a listing's `state` filter (`any` or one state) keeps a record in state `s`. */
export function stateMatches(filter: string | undefined, s: { state: DlqRecordState["state"] }): boolean {
  return filter === undefined || filter === "any" || filter === s.state;
}

/** Writes resolutions of `dlqTopic` (a re-drive's, a discard's); the backlog's next read is due at once. */
export async function recordResolutions(dlqTopic: string, items: readonly DlqResolutionInput[]): Promise<void> {
  if (items.length === 0) return;
  await dlqStateStore().resolve(dlqTopic, items);
  noteResolved();
}

export { positionKey };
