"use client";

import { useQuery } from "@tanstack/react-query";
import type { CapacityHandler } from "@/lib/api/capacity";
import type { HandlersResponse } from "@/lib/api/handlers";
import { formatBytes, formatCount, formatDurationMs, formatPercent, formatRate, formatWindowFill } from "@/lib/format";
import { keyFigures, keyRow } from "@/lib/key-figures";
import { capacityQuery, handlersQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { Panel, unavailableText } from "../panel";
import { QueryView } from "../query-state";
import type { StoreWords } from "@/lib/store-words";
import { useStoreWords } from "../store-words";

/**
 * One handler's row. The measured keys are the page's one key count (`/api/handlers`, the count
 * the key tile and the key panel show, lib/key-figures), and so are the measured memory and the
 * ratio to the projection; the projection, TTL and notes are the capacity answer's.
 */
function CapacityRow({
  h,
  keys,
  words,
}: {
  h: CapacityHandler;
  keys: HandlersResponse | undefined;
  words: StoreWords;
}) {
  const m = keyFigures(keys, h.service, h.handler);
  const bytesPerKey = keys ? (keyRow(keys, h.service, h.handler)?.bytesPerKey ?? null) : null;
  const count = m.status === "ok" ? m.count : null;
  return (
    <tr data-testid="capacity-row" className="border-t border-slate-100 align-top dark:border-slate-800">
      <td className="py-1 font-mono text-xs">{h.prefix}</td>
      <td className="text-right tabular-nums">
        {m.status === "ok" ? `${m.exact ? "" : "≈ "}${formatCount(m.count)}` : unavailableText(m.detail, words.name)}
        {m.status === "ok" && m.processing > 0 ? (
          <span data-testid="capacity-leases" className="block text-xs text-amber-800 dark:text-amber-300">
            {formatCount(m.processing, "processing")} ({formatPercent(m.leaseShare)})
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
        {count !== null && bytesPerKey !== null ? formatBytes(count * bytesPerKey) : "—"} /{" "}
        {formatBytes(h.projectedBytes)}
      </td>
      <td className="text-right tabular-nums">
        {count !== null && h.projectedKeys ? `× ${(count / h.projectedKeys).toFixed(2)}` : "—"}
      </td>
      <td className="pl-3 text-xs text-amber-800 dark:text-amber-300">
        {formatWindowFill(h.window, words.inStore) ? (
          <span data-testid="capacity-window" className="block text-slate-600 dark:text-slate-300">
            {formatWindowFill(h.window, words.inStore)}
          </span>
        ) : null}
        {h.notes.join("; ")}
      </td>
    </tr>
  );
}

/** Per-handler measured keys next to the projection (new messages/s × TTL), so a gap shows. */
export function CapacityTable({ only }: { only?: { service: string; handler: string } | null }) {
  const words = useStoreWords();
  const { view } = useViewState();
  const q = useQuery(capacityQuery(REFRESH_MS[view.refresh]));
  const keys = useQuery(handlersQuery(REFRESH_MS[view.refresh])).data;
  const mine = (h: CapacityHandler) => !only || (h.service === only.service && h.handler === only.handler);
  return (
    <Panel
      title="Keys and capacity projection"
      description="Live keys ≈ new (non-deduplicated) messages/s × TTL; memory ≈ keys × bytes per key."
      testId="capacity"
    >
      <QueryView
        query={q}
        what="Capacity"
        isEmpty={(d) => d.handlers.filter(mine).length === 0}
        empty={`No handler prefix found ${words.inStore} or in the declared handlers yet.`}
      >
        {(d) => (
          <div className="overflow-x-auto">
            <table className="w-full text-sm">
              <caption className="sr-only">Measured and projected keys per handler</caption>
              <thead className="text-left text-xs text-slate-500 dark:text-slate-400">
                <tr>
                  <th scope="col" className="py-1 font-normal">
                    Handler
                  </th>
                  <th scope="col" className="text-right font-normal">
                    Measured
                  </th>
                  <th scope="col" className="text-right font-normal">
                    Projected
                  </th>
                  <th scope="col" className="text-right font-normal">
                    New msg/s
                  </th>
                  <th scope="col" className="text-right font-normal">
                    TTL
                  </th>
                  <th scope="col" className="text-right font-normal">
                    Memory (measured / projected)
                  </th>
                  <th scope="col" className="text-right font-normal">
                    Measured ÷ projected
                  </th>
                  <th scope="col" className="pl-3 font-normal">
                    Notes
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.handlers.filter(mine).map((h) => (
                  <CapacityRow key={h.prefix} h={h} keys={keys} words={words} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryView>
    </Panel>
  );
}
