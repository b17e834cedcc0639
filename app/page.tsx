import { OverviewView } from "@/components/overview/overview-view";
import { PageShell } from "@/components/page-shell";
import { prefetchPage, rangeOf } from "./prefetch-queries";

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/**
 * Overview of every handler's dedup health. The view state is in the URL (range, refresh, handler,
 * and the fleet table's sort, service and search). Painted by the server: the overview and the
 * charts' series arrive in the HTML (app/prefetch-queries.ts), before the client bundle runs.
 */
export default async function HomePage({ searchParams }: { searchParams: SearchParams }) {
  const range = rangeOf(await searchParams);
  const state = await prefetchPage(range, [
    { metric: "duplicate_ratio" },
    { metric: "check_latency" },
    { metric: "error_rate" },
  ]);
  return (
    <PageShell title="Overview" loading="Loading overview…" height={240} state={state}>
      <OverviewView />
    </PageShell>
  );
}
