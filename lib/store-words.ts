import type { Health } from "./health";

/**
 * The dedup store in the UI's words, written once: "Redis" only when a Redis is configured; the
 * embedded mode's in-memory store otherwise (its banner says there is no Redis, so no panel may
 * speak of one); the PostgreSQL inbox for a handler whose keys are rows of its table. Until the
 * health probe answers, neutral words.
 */
export interface StoreWords {
  /** The store as a noun: "Redis", "the in-memory store". */
  name: string;
  /** Where keys are: "in Redis", "in the in-memory store". */
  inStore: string;
  /** A dedup check against it, capitalised: "Redis check", "Store check". */
  check: string;
  /** Its keys as a plural noun: "keys", "rows". */
  keys: string;
  /** The order a page of its keys comes in, as read: "SCAN order", "primary-key order". */
  order: string;
}

/** Which store the panels speak of. */
export type StoreKind = "redis" | "memory" | "postgres-inbox" | "unknown";

/** The words of each {@link StoreKind}. */
export const STORE_WORDS: Readonly<Record<StoreKind, StoreWords>> = {
  redis: { name: "Redis", inStore: "in Redis", check: "Redis check", keys: "keys", order: "SCAN order" },
  memory: {
    name: "the in-memory store",
    inStore: "in the in-memory store",
    check: "Store check",
    keys: "keys",
    order: "store order",
  },
  "postgres-inbox": {
    name: "the PostgreSQL inbox",
    inStore: "in the PostgreSQL inbox",
    check: "Inbox check",
    keys: "rows",
    order: "primary-key order",
  },
  unknown: {
    name: "the dedup store",
    inStore: "in the dedup store",
    check: "Store check",
    keys: "keys",
    order: "store order",
  },
};

/** The store of a `/api/health` answer: in-memory when Redis is not configured. */
export function storeKindOf(h: Pick<Health, "components"> | undefined): StoreKind {
  if (!h) return "unknown";
  return h.components.redis.status === "not-configured" ? "memory" : "redis";
}
