import type { Metadata } from "next";
import { Suspense } from "react";
import { LoadingState } from "@/components/panel";
import { WorkshopView } from "@/components/workshop/workshop-view";

export const metadata: Metadata = { title: "Workshop" };

/** The presenter's page: scenarios of duplicate sources and anti-patterns, run live, large type for a projector. */
export default function WorkshopPage() {
  return (
    <>
      <h1 className="text-3xl font-bold">Workshop</h1>
      <Suspense fallback={<LoadingState label="Loading workshop…" height={240} />}>
        <WorkshopView />
      </Suspense>
    </>
  );
}
