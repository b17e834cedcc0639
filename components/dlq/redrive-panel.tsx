"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "@/lib/query-options";
import { redrive } from "@/lib/record-queries";
import type { RedriveResponse } from "@/lib/api/dlq";
import { Panel } from "../panel";
import { TokenField } from "../workshop/token-field";
import { needsToken, useWorkshopToken } from "../workshop/token";

const btn = "rounded px-3 py-1 text-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40";

/**
 * Re-drive of the DLQ records matching the page's filter: a dry run first (the default: what would
 * be sent, to which topic), then the real action, which asks for confirmation with the count.
 */
export function RedrivePanel({ filter }: { filter: { handler?: string; reason?: string } }) {
  const tok = useWorkshopToken();
  const [preview, setPreview] = useState<RedriveResponse | null>(null);
  const m = useMutation({
    mutationFn: (dryRun: boolean) => redrive({ filter, dryRun }, tok.token),
    onSuccess: (r) => setPreview(r),
    onError: (e) => {
      if (needsToken(e)) tok.show();
    },
  });
  const real = () => {
    if (!preview || preview.matched === 0) return;
    if (window.confirm(`Re-drive ${preview.matched} message${preview.matched === 1 ? "" : "s"} to their original topics (same UUID)?`)) m.mutate(false);
  };
  const what = [filter.handler ? `handler ${filter.handler}` : null, filter.reason ? `reason ${filter.reason}` : null].filter(Boolean).join(", ") || "every record";
  return (
    <Panel title="Re-drive" description={`Publishes the DLQ records matching ${what} back to their topic_poisoned (only the consumer topics), same UUID, poison headers removed.`} testId="redrive">
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <div className="flex flex-wrap gap-2">
        <button type="button" data-testid="redrive-dry" onClick={() => m.mutate(true)} disabled={m.isPending} className={`${btn} border border-slate-300 hover:bg-slate-100 dark:border-slate-700 dark:hover:bg-slate-800`}>
          Preview (dry run)
        </button>
        <button type="button" data-testid="redrive-real" onClick={real} disabled={m.isPending || !preview?.dryRun || preview.matched === 0} className={`${btn} bg-red-700 text-white hover:bg-red-800`}>
          Re-drive {preview?.dryRun ? preview.matched : ""}
        </button>
      </div>
      {m.isError ? <p className="mt-2 text-sm text-red-700 dark:text-red-300">{m.error instanceof ApiError ? m.error.detail : String(m.error)}</p> : null}
      {preview ? (
        <div className="mt-3 text-sm" data-testid="redrive-result">
          <p>
            {preview.dryRun ? "Dry run: would re-drive" : "Re-drove"} <strong>{preview.dryRun ? preview.matched : preview.redriven}</strong> of {preview.matched} matched
            {preview.skipped ? `; ${preview.skipped} cannot be re-driven (no UUID, or a topic outside CONSUMER_TOPICS)` : ""}
            {preview.complete ? "" : "; the scan bound stopped before the oldest records (run again for more)"}.
          </p>
          {preview.preview.length ? (
            <ul className="mt-1 font-mono text-xs">
              {preview.preview.map((p) => (
                <li key={`${p.partition}:${p.offset}`}>
                  {p.uuid} → {p.topic} ({p.handler}, {p.reasonClass})
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </Panel>
  );
}
