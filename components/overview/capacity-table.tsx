"use client";

import { useQuery } from "@tanstack/react-query";
import { formatBytes, formatCount, formatDurationMs, formatPercent, formatRate, formatWindowFill } from "@/lib/format";
import { capacityQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { Panel, unavailableText } from "../panel";
import { QueryView } from "../query-state";
import { useStoreWords } from "../store-words";

/** Per-handler measured keys next to the projection (new messages/s × TTL), so a gap shows. */
export function CapacityTable({ only }: { only?: { service: string; handler: string } | null }) {
  const words = useStoreWords();
  const { view } = useViewState();
  const q = useQuery(capacityQuery(REFRESH_MS[view.refresh]));
  return (
    <Panel title="Keys and capacity projection" description="Live keys ≈ new (non-deduplicated) messages/s × TTL; memory ≈ keys × bytes per key." testId="capacity">
      <QueryView
        query={q}
        what="Capacity"
        isEmpty={(d) => d.handlers.filter((h) => !only || (h.service === only.service && h.handler === only.handler)).length === 0}
        empty={`No handler prefix found ${words.inStore} or in the declared handlers yet.`}
      >
        {(d) => (
          <div className="overflow-x-auto">
            <table className="w-full text-sm">
              <caption className="sr-only">Measured and projected keys per handler</caption>
              <thead className="text-left text-xs text-slate-500 dark:text-slate-400">
                <tr>
                  <th scope="col" className="py-1 font-normal">Handler</th>
                  <th scope="col" className="text-right font-normal">Measured</th>
                  <th scope="col" className="text-right font-normal">Projected</th>
                  <th scope="col" className="text-right font-normal">New msg/s</th>
                  <th scope="col" className="text-right font-normal">TTL</th>
                  <th scope="col" className="text-right font-normal">Memory (measured / projected)</th>
                  <th scope="col" className="text-right font-normal">Measured ÷ projected</th>
                  <th scope="col" className="pl-3 font-normal">Notes</th>
                </tr>
              </thead>
              <tbody>
                {d.handlers
                  .filter((h) => !only || (h.service === only.service && h.handler === only.handler))
                  .map((h) => (
                    <tr key={h.prefix} data-testid="capacity-row" className="border-t border-slate-100 align-top dark:border-slate-800">
                      <td className="py-1 font-mono text-xs">{h.prefix}</td>
                      <td className="text-right tabular-nums">
                        {h.measured.status === "ok" ? `${h.measured.exact ? "" : "≈ "}${formatCount(h.measured.keys)}` : unavailableText(h.measured.detail, words.name)}
                        {h.measured.status === "ok" && h.measured.processing > 0 ? (
                          <span data-testid="capacity-leases" className="block text-xs text-amber-800 dark:text-amber-300">
                            {formatCount(h.measured.processing, "processing")} ({formatPercent(h.measured.leaseShare)})
                          </span>
                        ) : null}
                      </td>
                      <td className="text-right tabular-nums">{formatCount(h.projectedKeys)}</td>
                      <td className="text-right tabular-nums">
                        {h.newRate.status === "ok" ? formatRate(h.newRate.value) : unavailableText(h.newRate.detail)}
                      </td>
                      <td className="text-right tabular-nums">
                        {formatDurationMs(h.ttlMs)} <span className="text-xs text-slate-500">({h.ttlSource})</span>
                      </td>
                      <td className="text-right tabular-nums">
                        {h.measured.status === "ok" ? formatBytes(h.measured.bytes) : "—"} / {formatBytes(h.projectedBytes)}
                      </td>
                      <td className="text-right tabular-nums">{h.gapRatio === null ? "—" : `× ${h.gapRatio.toFixed(2)}`}</td>
                      <td className="pl-3 text-xs text-amber-800 dark:text-amber-300">
                        {formatWindowFill(h.window, words.inStore) ? (
                          <span data-testid="capacity-window" className="block text-slate-600 dark:text-slate-300">
                            {formatWindowFill(h.window, words.inStore)}
                          </span>
                        ) : null}
                        {h.notes.join("; ")}
                      </td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryView>
    </Panel>
  );
}
