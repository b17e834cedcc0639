/**
 * Topics that are ready to use: created, and every partition with a leader in the broker's
 * metadata (what kafkajs' own `waitForLeaders` does not wait for on a loaded KRaft broker).
 */
import type { Admin } from "kafkajs";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates the topics of `topics` that are missing and resolves once every partition of every one
 * of them has a leader in the broker's metadata. kafkajs' own `waitForLeaders` retries only
 * LEADER_NOT_AVAILABLE; a KRaft broker under load answers a topic created a moment ago with
 * UNKNOWN_TOPIC_OR_PARTITION ("This server does not host this topic-partition") for a while, and
 * kafkajs' create itself fails so when its metadata refresh names a topic another caller of the
 * same admin is deleting: such answers are tried again until `timeoutMs`. A topic that was there
 * already is waited for with whatever partition count it has.
 */
export async function createTopicsReady(
  admin: Pick<Admin, "listTopics" | "createTopics" | "fetchTopicMetadata">,
  topics: ReadonlyArray<{ name: string; partitions: number }>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const missingNow = async () => {
    const existing = new Set(await admin.listTopics());
    return topics.filter((t) => !existing.has(t.name));
  };
  const created = new Set<string>();
  for (let missing = await missingNow(); missing.length > 0; missing = await missingNow()) {
    try {
      await admin.createTopics({
        waitForLeaders: false,
        topics: missing.map((t) => ({ topic: t.name, numPartitions: t.partitions, replicationFactor: 1 })),
      });
      for (const t of missing) created.add(t.name);
      break;
    } catch (e) {
      if (!isTransientTopicError(e) || Date.now() >= deadline) throw e;
      await sleep(100);
    }
  }
  await waitForLeaders(
    admin,
    topics.map((t) => ({ name: t.name, partitions: created.has(t.name) ? t.partitions : 1 })),
    Math.max(0, deadline - Date.now()),
  );
}

/** The kafkajs protocol error's type (`UNKNOWN_TOPIC_OR_PARTITION`, …), if `e` is one. */
function kafkaErrorType(e: unknown): string | undefined {
  const t = (e as { type?: unknown } | null)?.type;
  return typeof t === "string" ? t : undefined;
}

/** What a broker answers about a topic whose creation has not reached its metadata yet. */
export function isTransientTopicError(e: unknown): boolean {
  const t = kafkaErrorType(e);
  return (
    t === "UNKNOWN_TOPIC_OR_PARTITION" ||
    t === "LEADER_NOT_AVAILABLE" ||
    t === "NOT_LEADER_FOR_PARTITION" ||
    t === "NOT_CONTROLLER"
  );
}

/**
 * Polls the metadata of `topics` every `pollMs` until each has at least `partitions` partitions, each
 * with a leader; a transient answer (the topic not in the metadata yet, no leader yet) is polled
 * again, any other error is thrown. Throws after `timeoutMs`, naming what it still waited for.
 */
export async function waitForLeaders(
  admin: Pick<Admin, "fetchTopicMetadata">,
  topics: ReadonlyArray<{ name: string; partitions: number }>,
  timeoutMs: number,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  for (;;) {
    try {
      const md = await admin.fetchTopicMetadata({ topics: topics.map((t) => t.name) });
      const byName = new Map(md.topics.map((t) => [t.name, t.partitions]));
      const waiting = topics.filter((t) => {
        const parts = byName.get(t.name) ?? [];
        return parts.length < t.partitions || parts.some((p) => p.leader < 0);
      });
      if (waiting.length === 0) return;
      last = `no leader yet for ${waiting.map((t) => t.name).join(", ")}`;
    } catch (e) {
      if (!isTransientTopicError(e)) throw e;
      last = (e as Error).message;
    }
    if (Date.now() >= deadline) throw new Error(`Kafka: topics not ready after ${timeoutMs} ms (${last})`);
    await sleep(pollMs);
  }
}
