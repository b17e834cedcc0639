"use client";

import { useQuery } from "@tanstack/react-query";
import { healthQuery } from "@/lib/health";
import { STORE_WORDS, storeKindOf, type StoreWords } from "@/lib/store-words";
import { useHydrated } from "./hydrated";

/**
 * The dedup store's words for this app (from the shared `/api/health` query the status strip polls).
 * While hydrating they are the neutral words the server drew (it renders before any health answer):
 * the health answer may already be in the client's cache when a deferred panel hydrates, and other
 * words there are a hydration mismatch (React error 418).
 */
export function useStoreWords(): StoreWords {
  const q = useQuery(healthQuery());
  const hydrated = useHydrated();
  return STORE_WORDS[hydrated ? storeKindOf(q.data) : "unknown"];
}
