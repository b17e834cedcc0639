import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { handlersQuery, refreshHandlers } from "@/lib/query-options";

/** The server's minimum between two counts started on request (the inspector's refreshMinIntervalMs). */
const RECOUNT_EVERY_MS = 10_000;

/**
 * While `behind` (a count older than its handler's traffic, lib/key-figures `countBehindTraffic`),
 * asks for a recount at most every 10 s and puts the answer in the page's one `/api/handlers` entry,
 * so every panel moves to the newer count together.
 */
export function useCatchUpCount(behind: boolean): void {
  const client = useQueryClient();
  const last = useRef(0);
  useEffect(() => {
    if (!behind || Date.now() - last.current < RECOUNT_EVERY_MS) return;
    last.current = Date.now();
    refreshHandlers()
      .then((d) => client.setQueryData(handlersQuery(false).queryKey, d))
      .catch(() => undefined);
  }, [behind, client]);
}
