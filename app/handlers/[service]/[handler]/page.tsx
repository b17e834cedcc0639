import type { Metadata } from "next";
import { Suspense } from "react";
import { HandlerView } from "@/components/handler/handler-view";
import { LoadingState } from "@/components/panel";

type Params = Promise<{ service: string; handler: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const p = await params;
  return { title: `${decodeURIComponent(p.service)}/${decodeURIComponent(p.handler)}` };
}

/** Drill-down of one handler `/handlers/<service>/<handler>`. */
export default async function HandlerPage({ params }: { params: Params }) {
  const p = await params;
  const service = decodeURIComponent(p.service);
  const handler = decodeURIComponent(p.handler);
  return (
    <Suspense fallback={<LoadingState label="Loading handler…" height={240} />}>
      <HandlerView service={service} handler={handler} />
    </Suspense>
  );
}
