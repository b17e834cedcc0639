/**
 * The dedup store of a process, chosen in one place: Redis (standalone or Cluster) when a Redis
 * target is configured (`REDIS_URL` / `REDIS_CLUSTER_NODES`), else an in-process map. The app's
 * in-process stores are registered here for the dashboard's key inspection, so whoever builds a
 * store never imports the dashboard. A new kind of store is one more branch here, one repository
 * in server/dedup and one `KeySource` in server/observe/keys (docs/ARCHITECTURE.md "How to add a store").
 * The PostgreSQL inbox is not chosen here for a consumer (a handler wires the `inbox` middleware with
 * its own table): {@link createInboxStore} opens its table for the dashboard's reads and key actions.
 */
import { Pool } from "pg";
import { MemoryRepository, PostgresInboxRepository, RedisRepository, type DedupRepository } from "@/server/dedup";
import type { StoreKind as UiStoreKind } from "@/lib/store-words";
import { createDedupRedis, type RedisClient } from "./dedup-redis";
import { pgInboxPool } from "./dedup-postgres";

/** The kinds of dedup store; their words for the UI are in `lib/store-words.ts` (one entry each). */
export type StoreKind = Exclude<UiStoreKind, "unknown">;

/** Where a Redis store is: a URL, or a Cluster's seed nodes. */
export interface RedisTarget {
  url?: string;
  clusterNodes?: readonly string[];
}

/** A dedup store: its repository, its Redis client when it is Redis, and how to close it. */
export interface DedupStore {
  kind: StoreKind;
  repository: DedupRepository;
  /** The client of a Redis store (readiness checks and faults use it); absent for an in-process one. */
  redis?: RedisClient;
  /** Disconnects a Redis client; nothing to do for an in-process map. */
  close(): void;
}

/** Options of {@link createDedupStore}. */
export interface DedupStoreOptions {
  /** The Redis client's name (`CLIENT LIST`). @default "dedup-health-consumer" */
  clientName?: string;
  /** Register an in-process store for the key inspection (the dashboard's own demo). @default false */
  inspect?: boolean;
}

/** The store for `target`: Redis when given, else an in-process map (registered when `inspect`). */
export function createDedupStore(target: RedisTarget | undefined, opts: DedupStoreOptions = {}): DedupStore {
  if (target) {
    const redis = createDedupRedis(target, opts.clientName);
    return { kind: "redis", repository: new RedisRepository(redis), redis, close: () => redis.disconnect() };
  }
  const repository = new MemoryRepository();
  if (opts.inspect) registerMemoryStore(repository);
  return { kind: "memory", repository, close: () => {} };
}

/** Where a PostgreSQL inbox table is (`config().inbox`). */
export interface InboxTarget {
  url: string;
  schema: string;
  table: string;
}

/** The inbox table opened for reading: its repository (the quoted table, the SQL pool) and how to close its pool. */
export interface InboxStore {
  kind: "postgres-inbox";
  repository: PostgresInboxRepository;
  close(): Promise<void>;
}

/**
 * Opens the inbox table of `target` over a small pool of its own (2 connections, a statement cut
 * off after `statementTimeoutMs`, a connection attempt after 3 s), so a slow or absent database
 * costs a read its timeout, never a hung page. Connects lazily: nothing is asked until a read.
 */
export function createInboxStore(target: InboxTarget, opts: { statementTimeoutMs?: number } = {}): InboxStore {
  const pool = new Pool({
    connectionString: target.url,
    max: 2,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    statement_timeout: opts.statementTimeoutMs ?? 5000,
    application_name: "dedup-health-inbox-reader",
  });
  pool.on("error", () => undefined); // an idle connection dropped by the server: the next read reconnects
  const repository = new PostgresInboxRepository(pgInboxPool(pool), { schema: target.schema, table: target.table });
  return { kind: "postgres-inbox", repository, close: () => pool.end() };
}

/** The repository over an existing Redis client, or a fresh in-process map without one. */
export function repositoryFor(redis: RedisClient | undefined): DedupRepository {
  return redis ? new RedisRepository(redis) : new MemoryRepository();
}

/** One key of an in-process store. `expiresAt` is epoch ms, `null` for a key without TTL. */
export interface MemoryKey {
  key: string;
  value: string;
  expiresAt: number | null;
}

/** What the key inspection reads from an in-process store (the library's `MemoryRepository` has it). */
export interface MemoryKeyStore {
  /** Live keys with value and expiry, in a stable order (insertion). */
  entries(): Iterable<MemoryKey>;
  get(key: string): string | null;
  /** Remaining TTL in ms; -1 without TTL, -2 when absent (Redis PTTL semantics). */
  pttl(key: string): number;
  /** Deletes a key (the key actions); true when it was there. Absent: the store is read-only. */
  forget?(key: string): boolean;
  /** Sets a key's remaining TTL (the key actions); true when it was there. */
  expire?(key: string, ttlMs: number): boolean;
}

type G = typeof globalThis & { __dedupHealthMemoryStores?: MemoryKeyStore[] };

/** Registers an in-process store for inspection; returns it. */
export function registerMemoryStore<T extends MemoryKeyStore>(store: T): T {
  const g = globalThis as G;
  (g.__dedupHealthMemoryStores ??= []).push(store);
  return store;
}

/** The registered stores (kept on `globalThis`: route bundles and instrumentation share them). */
export function memoryStores(): readonly MemoryKeyStore[] {
  return (globalThis as G).__dedupHealthMemoryStores ?? [];
}

/** Forgets every registered store (tests). */
export function clearMemoryStores(): void {
  delete (globalThis as G).__dedupHealthMemoryStores;
}
