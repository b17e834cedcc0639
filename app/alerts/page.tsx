import type { Metadata } from "next";
import { Suspense } from "react";
import { AlertsView } from "@/components/alerts/alerts-view";
import { LoadingState } from "@/components/panel";

export const metadata: Metadata = { title: "Alerts" };

/** The three dedup alerts of spec §8: state (inactive / pending / firing), since when, per instance. */
export default function AlertsPage() {
  return (
    <>
      <h1 className="text-xl font-semibold">Alerts</h1>
      <Suspense fallback={<LoadingState label="Loading alerts…" height={200} />}>
        <AlertsView />
      </Suspense>
    </>
  );
}
