/**
 * The view state that lives in the URL — time range, auto-refresh interval, selected handler and
 * a few page-specific fields (the overview's fleet table: `sort`, `service`, `q`, parsed in
 * lib/fleet-view.ts) — so that a copied link reproduces the view.
 *
 * Pure parse/serialise functions (unit-tested) plus {@link useViewState}, the one client hook
 * that reads `useSearchParams()` and writes with `history.replaceState` (Next.js keeps
 * `useSearchParams` in sync with it, without a server round trip).
 */
import { useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";
import type { RangeKey } from "@/lib/api/common";
import { RANGE_OPTIONS } from "@/lib/ranges";

/** Auto-refresh intervals offered (off, 5 s, 15 s, 1 min). */
export const REFRESH_OPTIONS = ["off", "5s", "15s", "1m"] as const;
/** One auto-refresh interval. */
export type RefreshKey = (typeof REFRESH_OPTIONS)[number];
/** Interval in ms, `false` = off (react-query's `refetchInterval`). */
export const REFRESH_MS: Record<RefreshKey, number | false> = { off: false, "5s": 5_000, "15s": 15_000, "1m": 60_000 };
/** Human labels of the intervals. */
export const REFRESH_LABELS: Record<RefreshKey, string> = { off: "Off", "5s": "5 s", "15s": "15 s", "1m": "1 min" };

/** Everything a link carries. Absent fields are their defaults and are left out of the URL. */
export interface ViewState {
  range: RangeKey;
  refresh: RefreshKey;
  /** Selected handler as `service/handler` (overview filter), or null for all. */
  handler: string | null;
}

/** Defaults of {@link ViewState}. */
export const DEFAULT_VIEW_STATE: ViewState = { range: "1h", refresh: "15s", handler: null };

/** Reads a {@link ViewState} from URL parameters; unknown or bad values fall back to the defaults. */
export function parseViewState(params: Pick<URLSearchParams, "get">): ViewState {
  const range = params.get("range");
  const refresh = params.get("refresh");
  const handler = params.get("handler");
  return {
    range: (RANGE_OPTIONS as readonly string[]).includes(range ?? "") ? (range as RangeKey) : DEFAULT_VIEW_STATE.range,
    refresh: (REFRESH_OPTIONS as readonly string[]).includes(refresh ?? "")
      ? (refresh as RefreshKey)
      : DEFAULT_VIEW_STATE.refresh,
    handler: handler && /^[^/\s]{1,200}\/[^/\s]{1,200}$/.test(handler) ? handler : null,
  };
}

/**
 * Writes `patch` into `params` (a copy is returned): default values and nulls are removed, other
 * parameters (page-specific ones) are kept.
 */
export function withParams(params: URLSearchParams, patch: Record<string, string | null | undefined>): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [k, v] of Object.entries(patch)) {
    const dflt = (DEFAULT_VIEW_STATE as unknown as Record<string, unknown>)[k];
    if (v === null || v === undefined || v === "" || v === dflt) next.delete(k);
    else next.set(k, v);
  }
  return next;
}

/** `path` with the shared view state (range, refresh) of `params` — for links between pages. */
export function hrefWithView(
  path: string,
  params: Pick<URLSearchParams, "get">,
  extra: Record<string, string | null> = {},
): string {
  const v = parseViewState(params);
  const q = withParams(new URLSearchParams(), { range: v.range, refresh: v.refresh, ...extra });
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * The view state of the current URL and a setter that rewrites the URL in place
 * (`history.replaceState`), keeping the other parameters. Client components only; wrap the caller
 * in `<Suspense>` on statically rendered pages.
 */
export function useViewState(): {
  view: ViewState;
  params: URLSearchParams;
  set: (patch: Record<string, string | null | undefined>) => void;
} {
  const sp = useSearchParams();
  const key = sp.toString();
  const params = useMemo(() => new URLSearchParams(key), [key]);
  const view = useMemo(() => parseViewState(params), [params]);
  const set = useCallback((patch: Record<string, string | null | undefined>) => {
    const next = withParams(new URLSearchParams(window.location.search), patch);
    const s = next.toString();
    window.history.replaceState(null, "", `${window.location.pathname}${s ? `?${s}` : ""}${window.location.hash}`);
  }, []);
  return { view, params, set };
}
