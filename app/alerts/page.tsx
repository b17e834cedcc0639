import type { Metadata } from "next";
import { AlertsView } from "@/components/alerts/alerts-view";
import { PageShell } from "@/components/page-shell";

export const metadata: Metadata = { title: "Alerts" };

/** The three dedup alerts of spec §8: state (inactive / pending / firing), since when, per instance. */
export default function AlertsPage() {
  return (
    <PageShell title="Alerts" loading="Loading alerts…" height={200}>
      <AlertsView />
    </PageShell>
  );
}
