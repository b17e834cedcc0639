import type { Metadata } from "next";
import { Suspense } from "react";
import { DlqView } from "@/components/dlq/dlq-view";
import { LoadingState } from "@/components/panel";

export const metadata: Metadata = { title: "DLQ" };

/** The DLQ browser: records newest first by handler and reason class, and their re-drive. */
export default function DlqPage() {
  return (
    <>
      <h1 className="text-xl font-semibold">Dead-letter queue</h1>
      <Suspense fallback={<LoadingState label="Loading…" height={160} />}>
        <DlqView />
      </Suspense>
    </>
  );
}
