import type { Metadata } from "next";
import { Suspense } from "react";
import { AuditView } from "@/components/audit/audit-view";
import { LoadingState } from "@/components/panel";

export const metadata: Metadata = { title: "Audit" };

/** Every state-changing action: key forget / TTL, DLQ re-drive, workshop runs, demo switches and faults. */
export default function AuditPage() {
  return (
    <>
      <h1 className="text-xl font-semibold">Audit trail</h1>
      <Suspense fallback={<LoadingState label="Loading…" height={120} />}>
        <AuditView />
      </Suspense>
    </>
  );
}
