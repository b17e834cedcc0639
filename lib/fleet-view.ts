/**
 * The fleet table of the overview: when more than {@link FLEET_TABLE_MIN_HANDLERS}
 * handlers report, the overview lists one row per service/handler instead of one chart each. Pure
 * functions (unit-tested): the row of a handler, the worst-first order and the other sorts, the
 * service filter and the handler search, and their URL parameters.
 */
import type { AlertStateName } from "@/lib/api/common";
import type { OverviewHandler } from "@/lib/api/overview";

/** From this many handlers on, the overview is a table (a handful of charts reads; a fleet does not). */
export const FLEET_TABLE_MIN_HANDLERS = 7;

/** Sort orders of the table; `worst` = firing, then pending, then by duplicate ratio (the default). */
export const FLEET_SORTS = ["worst", "ratio", "rate", "errors", "p99", "keys", "name"] as const;
/** One sort order. */
export type FleetSort = (typeof FLEET_SORTS)[number];
/** Human labels of the sorts. */
export const FLEET_SORT_LABELS: Record<FleetSort, string> = {
  worst: "Worst first (alerts, then ratio)",
  ratio: "Duplicate ratio",
  rate: "Processed (5 min)",
  errors: "Errors (service)",
  p99: "Check p99 (service)",
  keys: "Keys",
  name: "Name",
};

/** URL parameter names of the table's state (next to range/refresh of lib/url-state). */
export const FLEET_PARAMS = { sort: "sort", service: "service", search: "q" } as const;

/** The table's view state, from the URL. */
export interface FleetViewState {
  sort: FleetSort;
  /** Only this service's rows, or null for all. */
  service: string | null;
  /** Case-insensitive substring of `service/handler`, or "" for all. */
  search: string;
}

/** Defaults of {@link FleetViewState} (left out of the URL). */
export const DEFAULT_FLEET_VIEW: FleetViewState = { sort: "worst", service: null, search: "" };

/** Reads a {@link FleetViewState} from URL parameters; unknown or bad values fall back to the defaults. */
export function parseFleetView(params: Pick<URLSearchParams, "get">): FleetViewState {
  const sort = params.get(FLEET_PARAMS.sort);
  const service = params.get(FLEET_PARAMS.service);
  const search = params.get(FLEET_PARAMS.search) ?? "";
  return {
    sort: (FLEET_SORTS as readonly string[]).includes(sort ?? "") ? (sort as FleetSort) : DEFAULT_FLEET_VIEW.sort,
    service: service && /^[^/\s]{1,200}$/.test(service) ? service : null,
    search: search.slice(0, 200),
  };
}

/** The URL patch that writes `v` (defaults become null, i.e. removed). */
export function fleetViewPatch(v: Partial<FleetViewState>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  if (v.sort !== undefined) out[FLEET_PARAMS.sort] = v.sort === DEFAULT_FLEET_VIEW.sort ? null : v.sort;
  if (v.service !== undefined) out[FLEET_PARAMS.service] = v.service || null;
  if (v.search !== undefined) out[FLEET_PARAMS.search] = v.search.trim() ? v.search : null;
  return out;
}

/** One row of the table: the overview handler's figures, flattened (null = no figure). */
export interface FleetRow {
  id: string;
  service: string;
  handler: string;
  alert: AlertStateName;
  /** Names of the alerts active on the row (its own and its service's). */
  activeAlerts: string[];
  ratio: number | null;
  rate: number | null;
  errors: number | null;
  p99: number | null;
  keys: number | null;
  keysExact: boolean;
  noTtl: number;
  ttlClass: OverviewHandler["ttlClass"];
  h: OverviewHandler;
}

const RANK: Record<AlertStateName, number> = { firing: 2, pending: 1, inactive: 0 };

/** The row of one overview handler. */
export function fleetRow(h: OverviewHandler): FleetRow {
  const alert: AlertStateName = h.alerts.some((a) => a.state === "firing")
    ? "firing"
    : h.alerts.some((a) => a.state === "pending")
      ? "pending"
      : "inactive";
  return {
    id: `${h.service}/${h.handler}`,
    service: h.service,
    handler: h.handler,
    alert,
    activeAlerts: [...new Set(h.alerts.filter((a) => a.state !== "inactive").map((a) => a.alert))].sort(),
    ratio: h.duplicateRatio.status === "ok" ? h.duplicateRatio.value : null,
    rate: h.processedRate.status === "ok" ? h.processedRate.total : null,
    errors: h.errorRates.status === "ok" ? h.errorRates.total : null,
    p99: h.checkLatency.status === "ok" ? h.checkLatency.p99Seconds : null,
    keys: h.keys.status === "ok" ? h.keys.count : null,
    keysExact: h.keys.status === "ok" && h.keys.exact,
    noTtl: h.keys.status === "ok" ? h.keys.noTtlCount : 0,
    ttlClass: h.ttlClass,
    h,
  };
}

/** Descending by a figure, rows without one last. */
const desc = (a: number | null, b: number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : b - a);
const byName = (a: FleetRow, b: FleetRow) => a.service.localeCompare(b.service) || a.handler.localeCompare(b.handler);

/** Compares two rows for `sort`; ties by name, so the order is total and stable across refreshes. */
export function compareRows(sort: FleetSort, a: FleetRow, b: FleetRow): number {
  switch (sort) {
    case "worst":
      return RANK[b.alert] - RANK[a.alert] || desc(a.ratio, b.ratio) || byName(a, b);
    case "ratio":
      return desc(a.ratio, b.ratio) || byName(a, b);
    case "rate":
      return desc(a.rate, b.rate) || byName(a, b);
    case "errors":
      return desc(a.errors, b.errors) || byName(a, b);
    case "p99":
      return desc(a.p99, b.p99) || byName(a, b);
    case "keys":
      return desc(a.keys, b.keys) || byName(a, b);
    case "name":
      return byName(a, b);
  }
}

/** The rows of `handlers` that pass the filter and search, in the view's order. */
export function fleetRows(handlers: readonly OverviewHandler[], v: FleetViewState): FleetRow[] {
  const q = v.search.trim().toLowerCase();
  return handlers
    .filter(
      (h) => (!v.service || h.service === v.service) && (!q || `${h.service}/${h.handler}`.toLowerCase().includes(q)),
    )
    .map(fleetRow)
    .sort((a, b) => compareRows(v.sort, a, b));
}
