/**
 * Re-driving one DLQ message — the one way both `npm run dlq:replay` (dlq-replay.ts) and
 * `POST /api/dlq/redrive` (server/observe/records/dlq.ts) send a message back: to the topic it was
 * poisoned on (`topic_poisoned`), with the SAME UUID (a replay is the same event: a correct
 * Deduplicator processes it once) and its metadata minus the poison keys, and ONLY to an allowed
 * topic — the configured consumer topics — so a DLQ record cannot be used to write elsewhere.
 */
import type { Publisher } from "@/server/dedup/pubsub";
import { POISON_METADATA_KEYS, TOPIC_POISONED_KEY } from "@/names/dedup";

/** A DLQ message as decoded from its record. */
export interface DlqMessage {
  /** `null`: the record had no readable UUID (a marshal failure): it cannot be re-driven. */
  uuid: string | null;
  metadata: Record<string, string>;
  payload: Uint8Array;
}

/** Where a DLQ message would go, or why it cannot. */
export type RedriveTarget = { ok: true; topic: string } | { ok: false; why: string };

/**
 * Where `msg` would be re-driven: its `topic_poisoned`, when it has a UUID and that topic is in
 * `allowTopics`.
 */
export function redriveTarget(msg: DlqMessage, allowTopics: ReadonlySet<string>): RedriveTarget {
  if (msg.uuid === null) return { ok: false, why: "no message UUID (a marshal failure): fix the producer and re-publish" };
  const topic = msg.metadata[TOPIC_POISONED_KEY];
  if (!topic) return { ok: false, why: "no topic_poisoned header" };
  if (!allowTopics.has(topic)) return { ok: false, why: `topic_poisoned ${topic} is not one of the allowed consumer topics (CONSUMER_TOPICS)` };
  return { ok: true, topic };
}

/** The metadata a re-driven message carries: its own, minus every key PoisonQueue added. */
export function redrivenMetadata(metadata: Record<string, string>): Record<string, string> {
  const out = { ...metadata };
  for (const k of POISON_METADATA_KEYS) delete out[k];
  return out;
}

/**
 * Publishes `msg` back to its origin topic ({@link redriveTarget}); returns the topic, or throws a
 * `RangeError` saying why it may not be re-driven.
 */
export async function redriveMessage(publisher: Publisher, msg: DlqMessage, allowTopics: ReadonlySet<string>, signal: AbortSignal = new AbortController().signal): Promise<string> {
  const target = redriveTarget(msg, allowTopics);
  if (!target.ok) throw new RangeError(`cannot re-drive: ${target.why}`);
  await publisher.publish(target.topic, { uuid: msg.uuid!, metadata: redrivenMetadata(msg.metadata), payload: msg.payload, signal, context: {} });
  return target.topic;
}
