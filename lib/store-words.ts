import type { Health } from "./health";

/**
 * The dedup store in the UI's words, written once: "Redis" only when a Redis is configured; the
 * embedded mode's in-memory store otherwise (its banner says there is no Redis, so no panel may
 * speak of one). Until the health probe answers, neutral words.
 */
export interface StoreWords {
  /** The store as a noun: "Redis", "the in-memory store". */
  name: string;
  /** Where keys are: "in Redis", "in the in-memory store". */
  inStore: string;
  /** A dedup check against it, capitalised: "Redis check", "Store check". */
  check: string;
}

/** Which store the panels speak of. */
export type StoreKind = "redis" | "memory" | "unknown";

/** The words of each {@link StoreKind}. */
export const STORE_WORDS: Readonly<Record<StoreKind, StoreWords>> = {
  redis: { name: "Redis", inStore: "in Redis", check: "Redis check" },
  memory: { name: "the in-memory store", inStore: "in the in-memory store", check: "Store check" },
  unknown: { name: "the dedup store", inStore: "in the dedup store", check: "Store check" },
};

/** The store of a `/api/health` answer: in-memory when Redis is not configured. */
export function storeKindOf(h: Pick<Health, "components"> | undefined): StoreKind {
  if (!h) return "unknown";
  return h.components.redis.status === "not-configured" ? "memory" : "redis";
}
