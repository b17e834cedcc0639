/**
 * Topics that are ready to use: created, and every partition with a leader in the broker's
 * metadata (what kafkajs' own `waitForLeaders` does not wait for on a loaded KRaft broker).
 */
import type { Admin } from "kafkajs";

/** The kafkajs protocol error's type (`UNKNOWN_TOPIC_OR_PARTITION`, …), if `e` is one. */
export function kafkaErrorType(e: unknown): string | undefined {
  const t = (e as { type?: unknown } | null)?.type;
  return typeof t === "string" ? t : undefined;
}

/** What a broker answers about a topic whose creation has not reached its metadata yet. */
export function isTransientTopicError(e: unknown): boolean {
  const t = kafkaErrorType(e);
  return t === "UNKNOWN_TOPIC_OR_PARTITION" || t === "LEADER_NOT_AVAILABLE" || t === "NOT_LEADER_FOR_PARTITION" || t === "NOT_CONTROLLER";
}

/**
 * Polls the metadata of `topics` every `pollMs` until each has at least `partitions` partitions, each
 * with a leader; a transient answer (the topic not in the metadata yet, no leader yet) is polled
 * again, any other error is thrown. Throws after `timeoutMs`, naming what it still waited for.
 */
export async function waitForLeaders(admin: Pick<Admin, "fetchTopicMetadata">, topics: ReadonlyArray<{ name: string; partitions: number }>, timeoutMs: number, pollMs = 100): Promise<void> {
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
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
