"use client";

import { useQuery } from "@tanstack/react-query";
import { healthQuery } from "@/lib/health";
import { STORE_WORDS, storeKindOf, type StoreWords } from "@/lib/store-words";

/** The dedup store's words for this app (from the shared `/api/health` query the status strip polls). */
export function useStoreWords(): StoreWords {
  const q = useQuery(healthQuery());
  return STORE_WORDS[storeKindOf(q.data)];
}
