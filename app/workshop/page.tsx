import type { Metadata } from "next";
import { PageShell } from "@/components/page-shell";
import { WorkshopView } from "@/components/workshop/workshop-view";

export const metadata: Metadata = { title: "Workshop" };

/** The presenter's page: scenarios of duplicate sources and anti-patterns, run live, large type for a projector. */
export default function WorkshopPage() {
  return (
    <PageShell title="Workshop" large loading="Loading workshop…" height={240}>
      <WorkshopView />
    </PageShell>
  );
}
