"use client";

import { useIsFetching } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { RangeKey } from "@/lib/api-types";
import { RANGE_LABELS, RANGE_OPTIONS, REFRESH_LABELS, REFRESH_OPTIONS, useViewState, type RefreshKey } from "@/lib/url-state";
import { ThemeToggle } from "./theme-toggle";

const selectCls =
  "rounded border border-slate-300 bg-white px-2 py-1 text-sm focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-700 dark:bg-slate-900";

/** Time range, auto-refresh interval and theme: the controls every page shares. Writes to the URL. */
export function Toolbar() {
  const { view, set } = useViewState();
  const fetching = useIsFetching();
  // Server HTML never says "Updating…"; show it only once hydrated (a query may start before this
  // boundary hydrates, and a text mismatch is a hydration error).
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return (
    <div className="flex flex-wrap items-center gap-3 text-sm" role="group" aria-label="View controls">
      <label className="flex items-center gap-1">
        <span className="text-slate-600 dark:text-slate-300">Time range</span>
        <select data-testid="range" className={selectCls} value={view.range} onChange={(e) => set({ range: e.target.value as RangeKey })}>
          {RANGE_OPTIONS.map((r) => (
            <option key={r} value={r}>
              {RANGE_LABELS[r]}
            </option>
          ))}
        </select>
      </label>
      <label className="flex items-center gap-1">
        <span className="text-slate-600 dark:text-slate-300">Auto-refresh</span>
        <select data-testid="refresh" className={selectCls} value={view.refresh} onChange={(e) => set({ refresh: e.target.value as RefreshKey })}>
          {REFRESH_OPTIONS.map((r) => (
            <option key={r} value={r}>
              {REFRESH_LABELS[r]}
            </option>
          ))}
        </select>
      </label>
      <span aria-live="polite" className="w-20 text-xs text-slate-500 dark:text-slate-400">
        {hydrated && fetching > 0 ? "Updating…" : ""}
      </span>
      <ThemeToggle />
    </div>
  );
}
