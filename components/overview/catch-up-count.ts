import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { handlersQuery, refreshHandlers } from "@/lib/query-options";

/** The server's minimum between two counts started on request (the inspector's refreshMinIntervalMs). */
const RECOUNT_EVERY_MS = 10_000;

/**
 * While `behind` (a count behind its handler's traffic, lib/key-figures `countBehindTraffic`), asks
 * for a recount now and every 10 s after (the server refuses one sooner and answers the running or
 * last count), and puts each answer in the page's one `/api/handlers` entry, so every panel moves to
 * the newer count together.
 */
export function useCatchUpCount(behind: boolean): void {
  const client = useQueryClient();
  useEffect(() => {
    if (!behind) return;
    const ask = () =>
      void refreshHandlers()
        .then((d) => client.setQueryData(handlersQuery(false).queryKey, d))
        .catch(() => undefined);
    ask();
    const t = setInterval(ask, RECOUNT_EVERY_MS);
    return () => clearInterval(t);
  }, [behind, client]);
}
