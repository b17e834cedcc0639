import type { Metadata } from "next";
import { DlqView } from "@/components/dlq/dlq-view";
import { PageShell } from "@/components/page-shell";

export const metadata: Metadata = { title: "DLQ" };

/** The DLQ browser: records newest first by handler and reason class, and their re-drive. */
export default function DlqPage() {
  return (
    <PageShell title="Dead-letter queue" loading="Loading…" height={160}>
      <DlqView />
    </PageShell>
  );
}
