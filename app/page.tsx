import { Suspense } from "react";
import { LoadingState } from "@/components/panel";
import { OverviewView } from "@/components/overview/overview-view";

/** Overview of every handler's dedup health. The view state is in the URL (range, refresh, handler). */
export default function HomePage() {
  return (
    <>
      <h1 className="text-xl font-semibold">Overview</h1>
      <Suspense fallback={<LoadingState label="Loading overview…" height={240} />}>
        <OverviewView />
      </Suspense>
    </>
  );
}
