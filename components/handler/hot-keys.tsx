"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { DUPLICATE_CAUSE_LEGEND } from "@/lib/chart-data";
import { formatClockSeconds, formatDurationMs, formatNumber } from "@/lib/format";
import type { HotKeyView } from "@/lib/api/hot-keys";
import { messageHref, uuidSearchHref } from "@/lib/record-queries";
import { hotKeysQuery } from "@/lib/query-options";
import { hrefWithView, REFRESH_MS, useViewState } from "@/lib/url-state";
import { EmptyState, Panel, UnavailableState } from "../panel";
import { QueryView } from "../query-state";
import { DataTable } from "../data-table";

/**
 * Under the process's hot UUIDs: how many copies were swallowed since when (local clock), and which
 * UUIDs the list may miss — none while every copy fits the sketches (never "fewer than 1 copies").
 */
export function hotKeysTotalText(total: number, capacity: number, sketches: number, since: string | null): string {
  const bound = Math.ceil(total / Math.max(1, capacity));
  const at = since ? new Date(since) : null;
  const clock = at && Number.isFinite(at.getTime()) ? formatClockSeconds(at.getTime() / 1000) : "—";
  return (
    `${formatNumber(total)} ${total === 1 ? "copy" : "copies"} swallowed since ${clock} over ${sketches} replica ` +
    `sketch${sketches === 1 ? "" : "es"} of this process; ` +
    (bound <= 1
      ? "every UUID swallowed is listed."
      : `a UUID with fewer than ${formatNumber(bound)} copies may be missing from the list.`)
  );
}

/** The record page of a hot key's latest copy (by position), else a UUID search on its topic. */
function recordHref(k: HotKeyView): string {
  const m = k.lastPosition ? /^(.+):(\d+):(\d+)$/.exec(k.lastPosition) : null;
  return m ? messageHref({ topic: m[1]!, partition: Number(m[2]), offset: m[3]! }) : uuidSearchHref(k.topic, k.uuid);
}

/** The key browser's lookup of a hot key (a whole key when a custom key factory made it). */
function keyHref(k: HotKeyView, params: URLSearchParams): string {
  const tail = `:${k.uuid}`;
  return k.key.endsWith(tail)
    ? hrefWithView("/keys", params, { prefix: k.key.slice(0, -tail.length), uuid: k.uuid })
    : hrefWithView("/keys", params, { uuid: k.key });
}

/** The copies' causes, largest first: "480 redelivery · 20 republish". */
function causes(k: HotKeyView): string {
  return Object.entries(k.byCause)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${formatNumber(n)} ${DUPLICATE_CAUSE_LEGEND[c]?.title ?? c}`)
    .join(" · ");
}

/** The handler's most swallowed UUIDs (space-saving sketch per replica, merged), linked to the key and the record. */
export function HotKeys({ service, handler }: { service: string; handler: string }) {
  const { view, params } = useViewState();
  const q = useQuery(hotKeysQuery(service, handler, REFRESH_MS[view.refresh]));
  return (
    <Panel
      title="Hot UUIDs: most swallowed copies"
      description="Per replica a fixed-size top list (space-saving) of the UUIDs swallowed as duplicates in the current and the previous window; each process exports its top UUIDs (dedup_hot_uuid_copies) and the table adds up every process Prometheus scrapes. A count is an upper bound; ± is how much of it may belong to UUIDs it replaced."
      testId="hot-keys"
    >
      <QueryView query={q} what="Hot UUIDs" height={120}>
        {(d) => {
          if (d.unavailable) return <UnavailableState detail={d.unavailable} fallback="Prometheus" height={80} />;
          if (d.notMeasured)
            return (
              <EmptyState height={80}>
                <span data-testid="not-measured" data-metric={d.notMeasured.metric}>
                  {d.notMeasured.detail}
                </span>
              </EmptyState>
            );
          if (d.keys.length === 0)
            return (
              <EmptyState height={80}>
                No duplicate swallowed in the last {formatDurationMs(2 * d.windowMs)}
                {d.scope === "fleet" ? ` by any of ${d.sketches} process${d.sketches === 1 ? "" : "es"}` : ""}.
              </EmptyState>
            );
          return (
            <div className="space-y-2">
              <DataTable
                columns={[
                  { label: "UUID", className: "pr-3" },
                  { label: "copies", align: "right", className: "pr-3" },
                  { label: "cause", className: "pr-3" },
                  { label: "open" },
                ]}
                label={`Hot UUIDs of ${service}/${handler}`}
              >
                {d.keys.map((k) => (
                  <tr
                    key={k.key}
                    data-testid="hot-key"
                    data-uuid={k.uuid}
                    className="border-t border-slate-100 dark:border-slate-800"
                  >
                    <td className="break-all pr-3 font-mono text-xs">{k.uuid}</td>
                    <td className="pr-3 text-right tabular-nums" data-testid="hot-key-count">
                      {formatNumber(k.count)}
                      {k.error > 0 ? <span className="text-xs text-slate-500"> ± {formatNumber(k.error)}</span> : null}
                    </td>
                    <td className="pr-3 text-xs">{causes(k)}</td>
                    <td className="space-x-2 text-xs">
                      <Link className="text-blue-700 underline dark:text-blue-300" href={keyHref(k, params)}>
                        key
                      </Link>
                      <Link className="text-blue-700 underline dark:text-blue-300" href={recordHref(k)}>
                        record
                      </Link>
                    </td>
                  </tr>
                ))}
              </DataTable>
              <p className="text-xs text-slate-500 dark:text-slate-400" data-testid="hot-keys-total">
                {d.scope === "fleet"
                  ? `fleet: the top ${d.capacity} of every process Prometheus scrapes (${d.sketches} process${d.sketches === 1 ? "" : "es"}), added up by UUID; a UUID not listed had at most ${formatNumber(d.errorBound ?? 0)} copies.`
                  : hotKeysTotalText(d.total, d.capacity, d.sketches, d.since)}
              </p>
            </div>
          );
        }}
      </QueryView>
    </Panel>
  );
}
