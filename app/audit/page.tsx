import type { Metadata } from "next";
import { AuditView } from "@/components/audit/audit-view";
import { PageShell } from "@/components/page-shell";

export const metadata: Metadata = { title: "Audit" };

/** Every state-changing action: key forget / TTL, DLQ re-drive, workshop runs, demo switches and faults. */
export default function AuditPage() {
  return (
    <PageShell title="Audit trail" loading="Loading…" height={120}>
      <AuditView />
    </PageShell>
  );
}
