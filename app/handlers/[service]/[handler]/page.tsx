import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { HandlerView } from "@/components/handler/handler-view";
import { PageShell } from "@/components/page-shell";
import { routeName } from "@/lib/route-params";
import { prefetchPage, rangeOf } from "../../../prefetch-queries";

type Params = Promise<{ service: string; handler: string }>;
type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** Service and handler of the path (Next.js has decoded them once: never again), or 404. */
async function names(params: Params): Promise<{ service: string; handler: string }> {
  const p = await params;
  const service = routeName(p.service);
  const handler = routeName(p.handler);
  if (service === null || handler === null) notFound();
  return { service, handler };
}

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { service, handler } = await names(params);
  return { title: `${service}/${handler}` };
}

/**
 * Drill-down of one handler `/handlers/<service>/<handler>`. Painted by the server: its numbers and
 * the charts at the top of the page arrive in the HTML (app/prefetch-queries.ts); the panels
 * below the fold fetch their own.
 */
export default async function HandlerPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { service, handler } = await names(params);
  const state = await prefetchPage(rangeOf(await searchParams), [
    { metric: "duplicate_ratio", service, handler },
    { metric: "duplicates_by_cause", service, handler },
    { metric: "processed_rate", service, handler },
  ]);
  return (
    <PageShell loading="Loading handler…" height={240} state={state}>
      <HandlerView service={service} handler={handler} />
    </PageShell>
  );
}
