"use client";

import { useIsFetching } from "@tanstack/react-query";
import { RANGE_LABELS, RANGE_OPTIONS } from "@/lib/ranges";
import { REFRESH_LABELS, REFRESH_OPTIONS, useViewState } from "@/lib/url-state";
import { LabeledSelect } from "./field";
import { useHydrated } from "./hydrated";
import { ThemeToggle } from "./theme-toggle";

const RANGE_CHOICES = RANGE_OPTIONS.map((k) => ({ value: k, label: RANGE_LABELS[k] }));
const REFRESH_CHOICES = REFRESH_OPTIONS.map((k) => ({ value: k, label: REFRESH_LABELS[k] }));

/** Time range, auto-refresh interval and theme: the controls every page shares. Writes to the URL. */
export function Toolbar() {
  const { view, set } = useViewState();
  const fetching = useIsFetching();
  // Server HTML never says "Updating…"; show it only once hydrated (a query may start before this
  // boundary hydrates, and a text mismatch is a hydration error).
  const hydrated = useHydrated();
  return (
    <div className="flex flex-wrap items-center gap-3 text-sm" role="group" aria-label="View controls">
      <LabeledSelect
        label="Time range"
        testId="range"
        value={view.range}
        options={RANGE_CHOICES}
        onChange={(range) => set({ range })}
      />
      <LabeledSelect
        label="Auto-refresh"
        testId="refresh"
        value={view.refresh}
        options={REFRESH_CHOICES}
        onChange={(refresh) => set({ refresh })}
      />
      <span aria-live="polite" className="w-20 text-xs text-slate-500 dark:text-slate-400">
        {hydrated && fetching > 0 ? "Updating…" : ""}
      </span>
      <ThemeToggle />
    </div>
  );
}
