/**
 * Where a key action reads and changes a handler's keys, one seam over the three stores: Redis
 * (a bounded SCAN and single-key scripts, ./action-scan.ts and ./action-keys.ts), the in-memory
 * stores of embedded mode, and the PostgreSQL inbox's rows (`ctx.inbox`: a `DELETE` of the row,
 * or a new `expires_at`, each only while its state is the one read). The route
 * (../routes/key-actions.ts) chooses the keys and keeps the previews; the stores only read and act.
 */
import { BadRequestError, UpstreamUnavailableError } from "../core/errors";
import type { ObserveContext } from "../core/ports";
import { whenReady, type RedisLike } from "../redis/client";
import { actOnKeys, readKeys } from "./action-keys";
import { actOnMemory, readMemory, scanPrefix } from "./action-scan";
import type { PrefixGlobs } from "./glob";
import type { HandlerOwner, InboxKeySource, StoredKey } from "./source";

/** What a selection asks of the store. */
export interface ActionSelection {
  uuids?: readonly string[];
  olderThanMs?: number;
}

/** One store's two steps of a key action. */
export interface ActionStore {
  /** The store's name in answers and errors: `redis`, `memory`, `postgres-inbox`. */
  readonly kind: "redis" | "memory" | "postgres-inbox";
  /** Whether keys of this store ran out a budget rather than the store itself (the note of an incomplete action). */
  readonly budgeted: boolean;
  /** Waits until the store can answer (Redis connecting), or fails. */
  ready(): Promise<void>;
  /** The keys of `prefix` the selection names (by UUID, else all, bounded) with their values; changes nothing. */
  read(
    a: ActionSelection,
    prefix: string,
    globs: PrefixGlobs,
    deadline: number,
  ): Promise<{ read: StoredKey[]; complete: boolean }>;
  /** Deletes each key, or sets its TTL, only while it holds the value read; the keys changed. */
  act(
    keys: ReadonlyMap<string, string>,
    op: "unlink" | "pexpire",
    ttlMs: number,
    deadline: number,
  ): Promise<{ changed: string[]; complete: boolean }>;
}

function redisStore(redis: RedisLike): ActionStore {
  return {
    kind: "redis",
    budgeted: true,
    ready: () => whenReady(redis, 1000),
    async read(a, prefix, globs, deadline) {
      const scanned = a.uuids
        ? { keys: a.uuids.map((u) => `${prefix}:${u}`).filter((k) => globs.matches(k)), complete: true }
        : await scanPrefix(redis, prefix, globs, deadline);
      const got = await readKeys(redis, scanned.keys, a.olderThanMs !== undefined, deadline);
      return { read: got.read, complete: got.complete && scanned.complete };
    },
    act: (keys, op, ttlMs, deadline) => actOnKeys(redis, keys, op, ttlMs, deadline),
  };
}

const memoryStore: ActionStore = {
  kind: "memory",
  budgeted: false,
  ready: async () => {},
  read: async (a, prefix, globs) => readMemory(a, prefix, globs),
  act: async (keys, op, ttlMs) => actOnMemory(keys, op, ttlMs),
};

function inboxStore(inbox: InboxKeySource, owner: HandlerOwner): ActionStore {
  return {
    kind: "postgres-inbox",
    budgeted: false,
    ready: async () => {},
    read(a) {
      if (a.olderThanMs !== undefined)
        throw new BadRequestError(
          "olderThanMs: the PostgreSQL inbox keeps no idle time (a row says when it expires, not when it was last read); select by uuids or state",
        );
      return inbox.readRows(owner, a.uuids);
    },
    act: (keys, op, ttlMs) => inbox.actOnRows(owner, keys, op, ttlMs),
  };
}

/** The store holding `prefix`'s keys: the inbox table when it owns the prefix, else Redis, else the in-memory stores. */
export function actionStoreOf(ctx: ObserveContext, prefix: string): ActionStore {
  const owner = ctx.inbox?.owns(prefix);
  if (ctx.inbox && owner) return inboxStore(ctx.inbox, owner);
  if (ctx.redis) return redisStore(ctx.redis);
  if (ctx.inspector?.kind === "memory") return memoryStore;
  throw new UpstreamUnavailableError("redis: not configured; set REDIS_URL to act on keys");
}
