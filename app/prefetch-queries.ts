/**
 * Pages painted by the server: the server component builds the same answers
 * the page's first requests would fetch (`/api/overview`, the charts' `/api/series`), straight from
 * server/observe — no HTTP round trip to itself — and hands them to React Query with
 * `HydrationBoundary`. The HTML then carries the numbers, and the client's first render finds them
 * in its cache under the very keys of lib/query-options (so nothing is fetched twice; polling
 * refetches as before, once the data is older than the client's `staleTime`).
 *
 * Bounded: a query not answered within {@link PREFETCH_BUDGET_MS} is left to the browser (a slow
 * or down upstream never holds the page back). Answers are redacted as every API answer is
 * (server/redact.ts), whoever the viewer.
 */
import { dehydrate, QueryClient, type DehydratedState } from "@tanstack/react-query";
import { rangeSchema, type RangeKey } from "@/lib/api/common";
import { overviewQuerySchema } from "@/lib/api/overview";
import { seriesQuerySchema, type SeriesMetric } from "@/lib/api/series";
import { handlersQuery, overviewQuery, seriesQuery } from "@/lib/query-options";
import { config } from "@/server/config";
import { getHandlers, getOverview, getSeries, observeContext } from "@/server/observe";
import { normalizeStep } from "@/server/observe/shared/series-step";
import { redactBody } from "@/server/redact";

/** How long the server waits for the prefetched answers before it sends the page without them. */
export const PREFETCH_BUDGET_MS = 800;

type SearchParams = Record<string, string | string[] | undefined>;

/**
 * The range of the page's URL (the one thing the prefetched keys depend on), read as
 * lib/url-state's parseViewState reads it (a bad value is the default range); that module is
 * client-only (useSearchParams), so the API's schema is used here.
 */
export function rangeOf(sp: SearchParams): RangeKey {
  const v = Array.isArray(sp.range) ? sp.range[0] : sp.range;
  const r = rangeSchema.safeParse(v);
  return r.success ? r.data : overviewQuerySchema.parse({}).range;
}

/** A series request as the page's panels make it, one per `[metric, service?, handler?]`. */
export interface SeriesPick {
  metric: SeriesMetric;
  service?: string;
  handler?: string;
}

/** Plain JSON, redacted, as the API would have answered. */
function asAnswer<T>(body: T): T {
  return JSON.parse(JSON.stringify(redactBody(body, config()))) as T;
}

/**
 * The dehydrated cache for a page: the overview of `range` and the series in `series`, each
 * fetched at most once (shared answers of server/observe), within {@link PREFETCH_BUDGET_MS}.
 */
export async function prefetchPage(range: RangeKey, series: readonly SeriesPick[]): Promise<DehydratedState> {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  const ctx = observeContext();
  const jobs: Array<Promise<void>> = [
    qc.prefetchQuery({
      queryKey: overviewQuery(range, false).queryKey,
      queryFn: async () => asAnswer(await getOverview(ctx, range)),
    }),
    // The key count every key figure of the page reads (lib/key-figures): one answer, one moment.
    qc.prefetchQuery({
      queryKey: handlersQuery(false).queryKey,
      queryFn: async () => asAnswer(await getHandlers(ctx, { refresh: false, mode: "auto" })),
    }),
    ...series.flatMap((s) => {
      // A name the API would refuse (400) is left to the browser, which shows that answer.
      const parsed = seriesQuerySchema.safeParse({ metric: s.metric, range, service: s.service, handler: s.handler });
      if (!parsed.success) return [];
      const q = parsed.data;
      return qc.prefetchQuery({
        queryKey: seriesQuery({ metric: s.metric, range, service: s.service, handler: s.handler }, false).queryKey,
        queryFn: async () => asAnswer(await getSeries(ctx, { ...q, step: normalizeStep(q.range, q.step) })),
      });
    }),
  ];
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([Promise.all(jobs), new Promise<void>((r) => (timer = setTimeout(r, PREFETCH_BUDGET_MS)))]);
  clearTimeout(timer);
  // Only answered queries go into the page (dehydrate's default keeps successes only).
  return dehydrate(qc);
}
