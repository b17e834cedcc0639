/**
 * `GET /api/hot-keys`: a handler's most swallowed UUIDs, merged over the sketches every
 * Deduplicator of this process keeps on the process's board (the demo runs several replicas in one
 * process: one sketch each, merged by `mergeHotKeys`, counts added and error bounds kept).
 */
import { DEFAULT_HOT_KEYS_OPTIONS, hotKeysBoard } from "@/server/dedup";
import type { HotKeysResponse } from "@/lib/api/hot-keys";

/** The hot-key table of one handler as the handler page shows it. */
export function getHotKeys(q: { service: string; handler: string }): HotKeysResponse {
  const board = hotKeysBoard();
  const sketches = board.sketches(q.service);
  const t = board.top(q.service, q.handler);
  return {
    generatedAt: new Date().toISOString(),
    service: q.service,
    handler: q.handler,
    since: t ? new Date(t.since).toISOString() : null,
    windowMs: sketches[0]?.options.windowMs ?? DEFAULT_HOT_KEYS_OPTIONS.windowMs,
    total: t?.total ?? 0,
    capacity: t?.capacity ?? DEFAULT_HOT_KEYS_OPTIONS.capacity,
    sketches: sketches.filter((s) => s.handlers().includes(q.handler)).length,
    scope: "process",
    keys: (t?.keys ?? []).map((k) => ({ key: k.key, uuid: k.uuid, topic: k.topic, count: k.count, error: k.error, byCause: k.byCause, lastPosition: k.lastPosition, lastAt: new Date(k.lastAt).toISOString() })),
  };
}
