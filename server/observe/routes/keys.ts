/**
 * The route builders of `GET /api/keys` and `GET /api/keys/lookup` (lib/api/keys.ts): the page or
 * the lookup from the context's in-process inspector when it pages its keys, else from Redis through
 * the key browser (`keys/browser.ts`); a handler whose keys are the PostgreSQL inbox's rows from
 * its table (`ctx.inbox`). Each key linked to its handler's topic.
 */
import type { KeyEntry, KeyLookupResponse, KeysResponse } from "@/lib/api/keys";
import type { ObserveContext } from "../core/ports";
import { errorText, UpstreamUnavailableError } from "../core/errors";
import { declaredHandlers, declaredPrefix } from "../core/handler-registry";
import { PrefixGlobs } from "../keys/glob";
import { lookupKeysOn, MAX_LOOKUP_PREFIXES, scanKeysPage } from "../keys/browser";
import { prefixTopic } from "../shared/fleet-info";

function requireRedis(ctx: ObserveContext) {
  if (!ctx.redis)
    throw new UpstreamUnavailableError(
      "redis: not configured (embedded mode keeps dedup keys in process memory); set REDIS_URL to browse keys",
    );
  return ctx.redis;
}

/**
 * Builds `GET /api/keys`: one page of a handler prefix's keys via `SCAN MATCH <prefix>:*` with the
 * prefix's glob characters escaped (matched literally), COUNT ≤ `MAX_SCAN_COUNT`, at most
 * `MAX_SCAN_CALLS_PER_PAGE` calls; every key is re-checked against the configured globs, so
 * no key outside `DEDUP_PREFIXES` is ever returned. On a Cluster the cursor walks every master.
 * A page holds about `count` keys (one SCAN reply is never split, so it may hold a few more);
 * with `state`, only that state's keys of the page (the stuck leases: `state=processing`).
 */
export async function browseKeys(
  ctx: ObserveContext,
  q: { prefix: string; cursor?: string; count: number; state?: KeyEntry["state"] },
): Promise<KeysResponse> {
  const page = await browseAll(ctx, q);
  // A key without a position links to a UUID search in its handler's topic, not an empty one.
  const topic = await prefixTopic(ctx, q.prefix);
  const keys = (q.state ? page.keys.filter((k) => k.state === q.state) : page.keys).map((k) => ({ ...k, topic }));
  return { ...page, keys };
}

async function browseAll(
  ctx: ObserveContext,
  q: { prefix: string; cursor?: string; count: number },
): Promise<KeysResponse> {
  // Which prefixes are the inbox's is known from its count: the first page waits for the first one.
  if (ctx.inbox && !ctx.inbox.current().result) await ctx.inbox.run().catch(() => undefined);
  const inbox = ctx.inbox?.owns(q.prefix) ? ctx.inbox : null;
  if (inbox) return inbox.browse(q).catch(unavailableAs("postgres-inbox"));
  // In-process stores page themselves (no Redis budget to spend); by method, not class: see KeySource.browse.
  if (ctx.inspector?.browse) return ctx.inspector.browse({ prefix: q.prefix, cursor: q.cursor, count: q.count });
  return scanKeysPage(requireRedis(ctx), ctx.prefixes, q);
}

/**
 * Builds `GET /api/keys/lookup`: looks `<prefix>:<uuid>` up under the known handler prefixes
 * (the one on screen, declared by the app, found by the inspector; at most
 * {@link MAX_LOOKUP_PREFIXES}) — one key read per prefix, no scan, within the shared budget.
 */
export async function lookupKey(ctx: ObserveContext, q: { uuid: string; prefix?: string }): Promise<KeyLookupResponse> {
  const r = await lookupEverywhere(ctx, q);
  const topics = new Map(
    await Promise.all(
      [...new Set(r.matches.map((m) => m.prefix))].map(async (p) => [p, await prefixTopic(ctx, p)] as const),
    ),
  );
  return { ...r, matches: r.matches.map((m) => ({ ...m, topic: topics.get(m.prefix) ?? null })) };
}

/** A failure of an upstream read as a 503 naming the store (a typed error passes through). */
function unavailableAs(store: string) {
  return (e: unknown): never => {
    if (e instanceof Error && "status" in e) throw e;
    throw new UpstreamUnavailableError(`${store}: ${errorText(e)}`);
  };
}

/**
 * The lookup in the key store and, beside it, in the inbox table: a store that could not be asked
 * is named in `notChecked` with why (a UUID not found there is not known absent). Without a key
 * store, the inbox's answer alone.
 */
async function lookupEverywhere(ctx: ObserveContext, q: { uuid: string; prefix?: string }): Promise<KeyLookupResponse> {
  if (!ctx.inbox) return lookupUnder(ctx, q);
  const keyStore = ctx.redis || ctx.inspector?.lookup ? lookupUnder(ctx, q) : null;
  const [main, inbox] = await Promise.allSettled([keyStore, ctx.inbox.lookup(q, MAX_LOOKUP_PREFIXES)]);
  if (main.status === "rejected" && inbox.status === "rejected") throw main.reason;
  const notChecked = inbox.status === "rejected" ? [{ store: "postgres-inbox", reason: errorText(inbox.reason) }] : [];
  if (main.status === "rejected")
    notChecked.push({ store: ctx.inspector?.kind ?? "redis", reason: errorText(main.reason) });
  const a = main.status === "fulfilled" ? main.value : null;
  const b = inbox.status === "fulfilled" ? inbox.value : null;
  return {
    generatedAt: new Date().toISOString(),
    uuid: q.uuid,
    checkedPrefixes: (a?.checkedPrefixes ?? 0) + (b?.checkedPrefixes ?? 0),
    matches: [...(a?.matches ?? []), ...(b?.matches ?? [])],
    ...(notChecked.length ? { notChecked } : {}),
  };
}

async function lookupUnder(ctx: ObserveContext, q: { uuid: string; prefix?: string }): Promise<KeyLookupResponse> {
  if (ctx.inspector?.lookup) {
    ctx.inspector.ensureFresh();
    return ctx.inspector.lookup(q, MAX_LOOKUP_PREFIXES);
  }
  const redis = requireRedis(ctx);
  const globs = new PrefixGlobs(ctx.prefixes);
  // Only prefixes the app knows — the one on screen (it may be newer than the last inspection, up to
  // a minute old), the declared handlers', the last inspection's — capped: one EVAL each.
  const prefixes = new Set<string>(q.prefix ? [q.prefix] : []);
  for (const p of declaredHandlers().map(declaredPrefix)) prefixes.add(p);
  for (const h of ctx.inspector?.current().result?.handlers ?? []) prefixes.add(h.prefix);
  ctx.inspector?.ensureFresh();
  const candidates = [...prefixes]
    .map((p) => `${p}:${q.uuid}`)
    .filter((k) => globs.matches(k))
    .slice(0, MAX_LOOKUP_PREFIXES);
  return lookupKeysOn(redis, candidates, q.uuid);
}
