"use client";

import { useIsFetching } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { RANGE_LABELS, RANGE_OPTIONS, REFRESH_LABELS, REFRESH_OPTIONS, useViewState } from "@/lib/url-state";
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
      <LabeledSelect label="Time range" testId="range" value={view.range} options={RANGE_OPTIONS} labels={RANGE_LABELS} onChange={(range) => set({ range })} />
      <LabeledSelect label="Auto-refresh" testId="refresh" value={view.refresh} options={REFRESH_OPTIONS} labels={REFRESH_LABELS} onChange={(refresh) => set({ refresh })} />
      <span aria-live="polite" className="w-20 text-xs text-slate-500 dark:text-slate-400">
        {hydrated && fetching > 0 ? "Updating…" : ""}
      </span>
      <ThemeToggle />
    </div>
  );
}

/** A labelled `<select>` over a fixed list of keys, each shown by its label. */
function LabeledSelect<K extends string>(p: { label: string; testId: string; value: K; options: readonly K[]; labels: Record<K, string>; onChange: (v: K) => void }) {
  return (
    <label className="flex items-center gap-1">
      <span className="text-slate-600 dark:text-slate-300">{p.label}</span>
      <select data-testid={p.testId} className={selectCls} value={p.value} onChange={(e) => p.onChange(e.target.value as K)}>
        {p.options.map((k) => (
          <option key={k} value={k}>
            {p.labels[k]}
          </option>
        ))}
      </select>
    </label>
  );
}
