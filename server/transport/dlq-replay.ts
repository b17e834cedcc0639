/**
 * DLQ replay: republishes each message of a DLQ topic to the topic it was poisoned on (metadata
 * `topic_poisoned`), with its record key and, by default, the SAME uuid (a replay is the same
 * event, so a correct Deduplicator processes it once — and the `anti-dedup-before-retry` scenario
 * shows it swallowed) — a payload conflict with a new UUID derived from its DLQ position (`mode`) —
 * and its metadata minus the poison keys, only to the allowed topics, at most `ratePerSecond` —
 * through `redriveMessage` (dlq-redrive.ts), the code `POST /api/dlq/redrive` sends with too.
 *
 * Progress is the committed offset of the consumer group `<dlqTopic>.replay`: a second run
 * replays only what arrived in the DLQ since, so running it twice does not publish twice.
 */
import { type Message, type Outcome, sequentialSink, type Publisher } from "@/server/dedup";
import type { RedriveMode } from "@/names/dlq";
import {
  NO_UUID_WHY,
  redriveMessage,
  redrivePacer,
  redriveTarget,
  type DlqMessage,
  type RedriveDestination,
} from "./dlq-redrive";
import type { Transport } from "./index";

/** Options of {@link replayDlq}. */
export interface ReplayDlqOptions {
  /**
   * The only topics a message may be republished to (the CLI: `CONSUMER_TOPICS`); a message
   * poisoned on another topic is skipped. Required: a DLQ record names its own destination.
   */
  allowTopics: readonly string[];
  /** Consumer group holding the replay position. @default `<dlqTopic>.replay` */
  groupId?: string;
  /** Most messages to replay in this run. @default 10000 */
  max?: number;
  /** Stop when nothing arrived for this long after the last message (or after joining). @default 2000 */
  idleMs?: number;
  /** Hard stop. @default 60000 */
  timeoutMs?: number;
  /** Publisher to republish with. @default transport.publisher */
  publisher?: Publisher;
  /**
   * Whether the DLQ record at this position still waits (the CLI: neither re-driven nor discarded
   * on the dashboard); one that does not is acked without a re-drive and counted in `notOpen`.
   * @default every record waits
   */
  isOpen?: (position: { partition: number; offset: string }) => boolean;
  /** Called for each message republished, with where it landed. @default none */
  onReplayed?: (msg: Message, topic: string, to: RedriveDestination) => void;
  /** `same-uuid` or `new-uuid` for every message (a payload conflict is refused in `same-uuid`). @default per message: `new-uuid` for a payload conflict, else `same-uuid` */
  mode?: RedriveMode;
  /** Most messages republished per second (the live traffic of the origin topic comes first). @default 50 */
  ratePerSecond?: number;
}

/** Defaults of {@link ReplayDlqOptions}. */
export const DEFAULT_REPLAY_DLQ_OPTIONS = { max: 10_000, idleMs: 2000, timeoutMs: 60_000, ratePerSecond: 50 } as const;

/** What a replay did. */
export interface ReplayReport {
  replayed: number;
  /** DLQ messages that cannot be replayed: no UUID (marshal failures), no `topic_poisoned`, or a topic not allowed. */
  skipped: number;
  /** Per original topic. */
  byTopic: Record<string, number>;
  /** Left alone: already re-driven or discarded ({@link ReplayDlqOptions.isOpen}). */
  notOpen: number;
  /** Why messages were skipped (a refused same-UUID re-drive of a payload conflict names it), and how many each. */
  skippedWhy: Record<string, number>;
}

/** Replays `dlqTopic` once (bounded); see the module doc. */
export async function replayDlq(
  transport: Transport,
  dlqTopic: string,
  options: ReplayDlqOptions,
): Promise<ReplayReport> {
  const o = { ...DEFAULT_REPLAY_DLQ_OPTIONS, groupId: `${dlqTopic}.replay`, ...options };
  if (!Number.isInteger(o.max) || o.max < 1 || o.max > 1_000_000)
    throw new RangeError("replayDlq: max must be an integer in [1, 1000000]");
  if (!(o.idleMs >= 100 && o.idleMs <= 60_000)) throw new RangeError("replayDlq: idleMs must be in [100, 60000]");
  const report: ReplayReport = { replayed: 0, skipped: 0, byTopic: {}, notOpen: 0, skippedWhy: {} };
  const pacer = redrivePacer(o.ratePerSecond);
  const allow = new Set(o.allowTopics);
  let last = Date.now();
  let full = false;
  const one = async (msg: Message): Promise<Outcome> => {
    if (report.replayed >= o.max) {
      full = true;
      return "nack"; // not replayed in this run: left for the next one
    }
    last = Date.now();
    const { partition: p, offset: off } = msg.context;
    if (o.isOpen && p !== undefined && off !== undefined && !o.isOpen({ partition: p, offset: off })) {
      report.notOpen++;
      return "ack";
    }
    const { topic: at = dlqTopic, partition = 0, offset = "" } = msg.context;
    const dlqMsg: DlqMessage = {
      uuid: msg.uuid,
      metadata: msg.metadata,
      payload: msg.payload,
      key: msg.key ?? null,
      position: { topic: at, partition, offset },
    };
    const target = redriveTarget(dlqMsg, allow, o.mode);
    if (!target.ok) {
      report.skipped++;
      report.skippedWhy[target.why] = (report.skippedWhy[target.why] ?? 0) + 1;
      return "ack";
    }
    const topic = target.topic;
    let to: RedriveDestination;
    try {
      await pacer.wait(msg.signal);
      to = await redriveMessage(o.publisher ?? transport.publisher, dlqMsg, allow, {
        mode: o.mode,
        signal: msg.signal,
      });
    } catch {
      return "nack";
    }
    report.replayed++;
    report.byTopic[topic] = (report.byTopic[topic] ?? 0) + 1;
    o.onReplayed?.(msg, topic, to);
    return "ack";
  };
  const sink = sequentialSink(one);
  const sub = transport.subscriber({
    groupId: o.groupId,
    replica: "dlq-replay",
    nackDelayMs: 1000,
    onUnreadable: () => {
      report.skipped++;
      report.skippedWhy[NO_UUID_WHY] = (report.skippedWhy[NO_UUID_WHY] ?? 0) + 1;
      last = Date.now();
    },
  });
  const stop = new AbortController();
  const started = Date.now();
  const subscription = await sub.subscribe(dlqTopic, sink, stop.signal);
  last = Date.now();
  while (!full && Date.now() - last < o.idleMs && Date.now() - started < o.timeoutMs)
    await new Promise((r) => setTimeout(r, 100));
  stop.abort();
  await subscription.closed;
  await sub.close();
  return report;
}
