/**
 * The key browser's Redis side: one page of a prefix's keys by `SCAN` under the shared browse budget
 * (a cursor over every master of a Cluster), and the read of a UUID's candidate keys. The routes of
 * `/api/keys` and `/api/keys/lookup` are `routes/keys.ts`.
 */
import { createHmac, randomBytes } from "node:crypto";
import { Cluster, type Redis } from "ioredis";
import { clusterSlot } from "@/server/dedup";
import type { KeyEntry, KeyLookupResponse, KeysResponse } from "@/lib/api/keys";
import { BadRequestError, UpstreamUnavailableError, errorText } from "../core/errors";
import { escapeGlob, PrefixGlobs, splitPrefix } from "./glob";
import { classifyValue, donePosition, VALUE_READ_BYTES } from "./samples";
import { DESCRIBE_KEY_LUA } from "./scripts";
import { masters, nodeId, whenReady, type RedisLike } from "../redis/client";
import { countUpstream } from "../core/upstream-counter";
import { browseBudget, type RedisBudget } from "./budget";

/** SCAN calls one page may make before it returns what it has with a cursor to go on. */
export const MAX_SCAN_CALLS_PER_PAGE = 40;
/**
 * SCAN COUNT ceiling. RedisInsight's COUNT of 10,000 made single SCANs take 11-15 ms; here a
 * COUNT of 1000 was seen at 6 ms wall time on a busy shared core, so pages use ≤ 500.
 */
export const MAX_SCAN_COUNT = 500;
/**
 * How long one page may wait in total for the shared budget after its first SCAN before it returns
 * what it has (with a cursor). Waiting costs Redis nothing (the refill rate bounds the calls); it
 * gives a viewer paging a sparse handler fuller pages, and callers that loop fewer, longer requests.
 */
export const MAX_PAGE_BUDGET_WAIT_MS = 400;
/** Keys per describe pipeline (PTTL, MEMORY USAGE, GETRANGE each). */
export const DESCRIBE_KEYS_PER_CALL = 100;
/** Most prefixes one UUID lookup checks (one EVAL each): the prefix on screen first, then declared, then inspected. */
export const MAX_LOOKUP_PREFIXES = 32;

interface CursorPart {
  node: Redis;
  id: string;
  cursor: string;
}

/**
 * A master's name inside a cursor: an HMAC of its `host:port` under a key made at start-up, not the
 * address itself — the cursor goes to every viewer (no internal host in answers, nor one
 * guessable by hashing candidate addresses), and the answer's redaction would otherwise rewrite the
 * address to `<redis>` and break the cursor. A cursor from before a restart is a 400 (start again).
 */
export function cursorNodeId(id: string): string {
  const g = globalThis as typeof globalThis & { __dedupHealthCursorKey?: Buffer };
  g.__dedupHealthCursorKey ??= randomBytes(16);
  return `n${createHmac("sha256", g.__dedupHealthCursorKey).update(id).digest("hex").slice(0, 16)}`;
}

/** Encodes the remaining masters and their SCAN cursors: `<node hash>@cursor|…`; `null` when all are done. */
export function encodeCursor(parts: readonly CursorPart[]): string | null {
  return parts.length === 0 ? null : parts.map((p) => `${cursorNodeId(p.id)}@${p.cursor}`).join("|");
}

/** Decodes a cursor against the current masters; a node that is no longer a master is a 400. */
export function decodeCursor(cursor: string | undefined, nodes: readonly Redis[]): CursorPart[] {
  const byId = new Map(nodes.map((n) => [cursorNodeId(nodeId(n)), n]));
  if (!cursor) return nodes.map((n) => ({ node: n, id: nodeId(n), cursor: "0" }));
  const out: CursorPart[] = [];
  for (const part of cursor.split("|")) {
    const at = part.lastIndexOf("@");
    const id = part.slice(0, at);
    const c = part.slice(at + 1);
    const node = byId.get(id);
    if (at < 1 || !/^\d{1,20}$/.test(c) || BigInt(c) > 18446744073709551615n)
      throw new BadRequestError("cursor: expected a cursor returned by a previous page");
    if (!node)
      throw new BadRequestError(
        `cursor: node ${id} is not a current master (the topology changed); start again without a cursor`,
      );
    out.push({ node, id: nodeId(node), cursor: c });
  }
  return out;
}

async function describe(node: Redis, keys: readonly string[]): Promise<KeyEntry[]> {
  if (keys.length === 0) return [];
  const p = node.pipeline();
  for (const k of keys)
    p.pttl(k)
      .call("MEMORY", "USAGE", k, "SAMPLES", "0")
      .getrange(k, 0, VALUE_READ_BYTES - 1);
  const res = (await countUpstream("redis", () => p.exec())) ?? [];
  return keys.flatMap((key, i): KeyEntry[] => {
    const [, ttl] = res[3 * i] ?? [];
    if (ttl === -2) return []; // expired meanwhile
    const [memErr, mem] = res[3 * i + 1] ?? [];
    const [valErr, val] = res[3 * i + 2] ?? [];
    return [
      {
        key,
        uuid: key.slice(key.lastIndexOf(":") + 1),
        state: valErr ? "other" : classifyValue(String(val ?? "")),
        ttlMs: typeof ttl === "number" ? ttl : null,
        bytes: !memErr && typeof mem === "number" ? mem : null,
        record: valErr ? null : donePosition(String(val ?? "")),
      },
    ];
  });
}

/** The node serving `key`: the standalone client itself, or the Cluster master of its slot. */
export function ownerOf(redis: RedisLike, key: string): Redis | RedisLike {
  if (!(redis instanceof Cluster)) return redis;
  const owner = redis.slots[clusterSlot(key)]?.[0];
  const node = owner ? masters(redis).find((n) => nodeId(n) === owner) : undefined;
  return node ?? redis; // slots not known yet: let the Cluster client route (and redirect)
}

/**
 * One page of `<prefix>:*` keys on Redis under the shared browse budget (the page `GET /api/keys`
 * answers): see {@link MAX_SCAN_CALLS_PER_PAGE}, {@link MAX_SCAN_COUNT}; only keys inside `prefixes`' globs.
 */
export async function scanKeysPage(
  redis: RedisLike,
  prefixes: readonly string[],
  q: { prefix: string; cursor?: string; count: number },
): Promise<KeysResponse> {
  const globs = new PrefixGlobs(prefixes);
  try {
    await whenReady(redis, 1000);
  } catch (e) {
    throw new UpstreamUnavailableError(`redis: ${errorText(e)}`);
  }
  const parts = decodeCursor(q.cursor, masters(redis));
  const match = `${escapeGlob(q.prefix)}:*`;
  const found = new Map<Redis, string[]>();
  let n = 0;
  let visited = 0;
  let calls = 0;
  let scanCount = Math.min(MAX_SCAN_COUNT, Math.max(100, q.count * 2));
  const budget: RedisBudget = browseBudget();
  // The first call may wait briefly for the shared budget, or answer 429; later ones wait up to the
  // page's deadline, then end the page early (with a cursor to go on).
  await budget.take(1);
  const waitUntil = performance.now() + MAX_PAGE_BUDGET_WAIT_MS;
  try {
    while (parts.length > 0 && n < q.count && calls < MAX_SCAN_CALLS_PER_PAGE) {
      if (calls > 0 && !(await budget.takeWithin(1, waitUntil - performance.now()))) break;
      const part = parts[0]!;
      const [next, keys] = await budget.run(() =>
        countUpstream("redis", () => part.node.scan(part.cursor, "MATCH", match, "COUNT", scanCount)),
      );
      calls++;
      const mine = keys.filter((k) => k.startsWith(`${q.prefix}:`) && globs.matches(k));
      // Only keys inside DEDUP_PREFIXES count: the number must not tell whether other keys exist.
      visited += mine.length;
      if (mine.length) found.set(part.node, [...(found.get(part.node) ?? []), ...mine]);
      n += mine.length;
      // Sparse prefix: widen the next SCAN (still ≤ MAX_SCAN_COUNT: ~0.4 ms per call on 200k keys).
      if (mine.length < q.count / 4) scanCount = Math.min(MAX_SCAN_COUNT, scanCount * 2);
      if (next === "0") parts.shift();
      else part.cursor = next;
    }
    // Described DESCRIBE_KEYS_PER_CALL keys per pipeline, one pipeline in flight: a dedup check's
    // command waits behind ~300 short commands at most, not a whole page's 3 per key.
    const batches = [...found].flatMap(([node, keys]) =>
      Array.from(
        { length: Math.ceil(keys.length / DESCRIBE_KEYS_PER_CALL) },
        (_, i) => [node, keys.slice(i * DESCRIBE_KEYS_PER_CALL, (i + 1) * DESCRIBE_KEYS_PER_CALL)] as const,
      ),
    );
    const entries = (await Promise.all(batches.map(([node, keys]) => budget.run(() => describe(node, keys))))).flat();
    return {
      generatedAt: new Date().toISOString(),
      prefix: q.prefix,
      keys: entries,
      cursor: encodeCursor(parts),
      visited,
    };
  } catch (e) {
    if (e instanceof BadRequestError) throw e;
    throw new UpstreamUnavailableError(`redis: ${errorText(e)}`);
  }
}

/** Reads each of `candidates` (`<prefix>:<uuid>` keys) on its master, one small script each, within the shared browse budget. */
export async function lookupKeysOn(
  redis: RedisLike,
  candidates: readonly string[],
  uuid: string,
): Promise<KeyLookupResponse> {
  const q = { uuid };
  const budget: RedisBudget = browseBudget();
  await budget.take(Math.max(1, candidates.length));
  try {
    await whenReady(redis, 1000);
    const entries = await Promise.all(
      candidates.map(async (key) => {
        // One script per key, sent to the key's master (auto-pipelining cannot group EVALs across slots).
        const node = ownerOf(redis, key);
        const [ttl, mem, val] = (await budget.run(() =>
          countUpstream("redis", () => node.eval(DESCRIBE_KEY_LUA, 1, key)),
        )) as [number, number | null, string | null];
        return { key, ttl, mem, val };
      }),
    );
    const matches = entries
      .filter((e) => e.ttl !== -2)
      .map((e) => {
        const prefix = e.key.slice(0, e.key.length - q.uuid.length - 1);
        const owner = splitPrefix(prefix);
        return {
          key: e.key,
          uuid: q.uuid,
          state: e.val === null ? ("other" as const) : classifyValue(e.val),
          record: e.val === null ? null : donePosition(e.val),
          ttlMs: e.ttl,
          bytes: typeof e.mem === "number" ? e.mem : null,
          service: owner.service,
          handler: owner.handler,
          prefix,
        };
      });
    return { generatedAt: new Date().toISOString(), uuid: q.uuid, checkedPrefixes: candidates.length, matches };
  } catch (e) {
    throw new UpstreamUnavailableError(`redis: ${errorText(e)}`);
  }
}
