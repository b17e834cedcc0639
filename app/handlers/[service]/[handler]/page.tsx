import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { Suspense } from "react";
import { HandlerView } from "@/components/handler/handler-view";
import { LoadingState } from "@/components/panel";
import { prefetchPage, rangeOf } from "../../../prefetch-queries";

type Params = Promise<{ service: string; handler: string }>;
type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const p = await params;
  return { title: `${decodeURIComponent(p.service)}/${decodeURIComponent(p.handler)}` };
}

/**
 * Drill-down of one handler `/handlers/<service>/<handler>`. Painted by the server: its numbers and
 * the charts at the top of the page arrive in the HTML (app/prefetch-queries.ts); the panels
 * below the fold fetch their own.
 */
export default async function HandlerPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const p = await params;
  const service = decodeURIComponent(p.service);
  const handler = decodeURIComponent(p.handler);
  const state = await prefetchPage(rangeOf(await searchParams), [
    { metric: "duplicate_ratio", service, handler },
    { metric: "duplicates_by_cause", service, handler },
    { metric: "processed_rate", service, handler },
  ]);
  return (
    <HydrationBoundary state={state}>
      <Suspense fallback={<LoadingState label="Loading handler…" height={240} />}>
        <HandlerView service={service} handler={handler} />
      </Suspense>
    </HydrationBoundary>
  );
}
