/**
 * react-query option factories for every dashboard endpoint: one place that knows the URLs, the
 * query keys and how a non-2xx answer becomes an {@link ApiError}.
 *
 * Only types are imported from `lib/api/*`, so the browser bundle does
 * not carry zod. Polling: `refetchInterval` comes from the URL's refresh setting; react-query skips
 * interval refetches while the tab is hidden (`refetchIntervalInBackground: false`, set in
 * app/providers.tsx).
 */
import { keepPreviousData, queryOptions, infiniteQueryOptions, type QueryKey } from "@tanstack/react-query";
import type { AlertsResponse } from "@/lib/api/alerts";
import type { CapacityResponse } from "@/lib/api/capacity";
import type { RangeKey } from "@/lib/api/common";
import type { HandlersResponse } from "@/lib/api/handlers";
import type { KeyLookupResponse, KeysResponse } from "@/lib/api/keys";
import type { LintResponse } from "@/lib/api/lint";
import type { OverviewResponse } from "@/lib/api/overview";
import type { SeriesMetric, SeriesResponse } from "@/lib/api/series";
import type { SilenceAnswer, SilenceCreate, SilencesResponse } from "@/lib/api/silences";
import type { EventsResponse } from "@/lib/api/events";
import type { DemoEffects, DemoFaults, DemoFaultsPatch, DemoSources, DemoSourcesPatch } from "@/lib/api/demo";
import type { RunCreated, RunPace, RunView, ScenarioList } from "@/lib/api/workshop";
import type { HotKeysResponse } from "@/lib/api/hot-keys";

/** A non-2xx answer (or no answer) of the dashboard API, with the server's `{ error, detail }`. */
export class ApiError extends Error {
  constructor(
    /** HTTP status, 0 when the request did not reach the server. */
    readonly status: number,
    /** The body's `error` code (`unavailable`, `not_found`, …) or `network`. */
    readonly code: string,
    /** The body's `detail`, or a description of what went wrong. */
    readonly detail: string,
    /** Extra fields of the error body (e.g. `runId` on a workshop 409). */
    readonly body: Record<string, unknown> = {},
  ) {
    super(`${detail} (${status || "no answer"})`);
    this.name = "ApiError";
  }
}

/** Fetches JSON from the app's API; throws {@link ApiError} on a non-2xx answer or a network error. */
export async function fetchJson<T>(url: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      cache: "no-store",
      ...init,
      headers: { accept: "application/json", ...(init?.headers ?? {}) },
    });
  } catch (e) {
    throw new ApiError(0, "network", `the dashboard server did not answer: ${(e as Error).message}`);
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const b = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const code = typeof b.error === "string" ? b.error : res.status === 404 ? "not_found" : "http";
    const detail =
      typeof b.detail === "string"
        ? b.detail
        : res.status === 404
          ? `${url.split("?")[0]} is not available on this server`
          : `${url.split("?")[0]} answered ${res.status}`;
    // A 429's `Retry-After` (seconds) rides along in the body fields: the key browser waits that long before retrying.
    const retryAfter = Number(res.headers.get("retry-after"));
    throw new ApiError(
      res.status,
      code,
      detail,
      Number.isFinite(retryAfter) && retryAfter > 0 ? { ...b, retryAfterSeconds: retryAfter } : b,
    );
  }
  return body as T;
}

type Interval = number | false;

/**
 * A polled `GET url` of the dashboard API, cached under `queryKey` and refetched every
 * `refetchInterval`. With `keepPrevious` the last answer stays on screen while the one of a new key
 * (another range or filter) loads.
 */
function polled<T>(queryKey: QueryKey, url: string, refetchInterval: Interval, keepPrevious = false) {
  return queryOptions({
    queryKey,
    queryFn: ({ signal }) => fetchJson<T>(url, { signal }),
    refetchInterval,
    placeholderData: keepPrevious ? keepPreviousData : undefined,
  });
}

/** `GET /api/overview?range=` */
export const overviewQuery = (range: RangeKey, refetchInterval: Interval) =>
  polled<OverviewResponse>(["overview", range], `/api/overview?range=${range}`, refetchInterval, true);

/** Series filter: all handlers, one service, or one handler of a service. */
export interface SeriesFilter {
  metric: SeriesMetric;
  range: RangeKey;
  service?: string | undefined;
  handler?: string | undefined;
}

/** `GET /api/series?metric=&service=&handler=&range=` */
export const seriesQuery = (f: SeriesFilter, refetchInterval: Interval) => {
  const q = new URLSearchParams({ metric: f.metric, range: f.range });
  if (f.service) q.set("service", f.service);
  if (f.handler) q.set("handler", f.handler);
  return polled<SeriesResponse>(
    ["series", f.metric, f.range, f.service ?? null, f.handler ?? null],
    `/api/series?${q}`,
    refetchInterval,
    true,
  );
};

/** `GET /api/alerts` */
export const alertsQuery = (refetchInterval: Interval) =>
  polled<AlertsResponse>(["alerts"], "/api/alerts", refetchInterval);

/** `GET /api/hot-keys?service=&handler=` */
export const hotKeysQuery = (service: string, handler: string, refetchInterval: Interval) =>
  polled<HotKeysResponse>(
    ["hot-keys", service, handler],
    `/api/hot-keys?${new URLSearchParams({ service, handler })}`,
    refetchInterval,
    true,
  );

/** `GET /api/capacity` */
export const capacityQuery = (refetchInterval: Interval) =>
  polled<CapacityResponse>(["capacity"], "/api/capacity", refetchInterval);

/** `GET /api/lint` */
export const lintQuery = () =>
  queryOptions({
    queryKey: ["lint"] as const,
    queryFn: ({ signal }) => fetchJson<LintResponse>("/api/lint", { signal }),
    staleTime: 30_000,
  });

/** `GET /api/handlers`: per-handler key counts; polls fast while a scan runs. */
export const handlersQuery = (refetchInterval: Interval) =>
  queryOptions({
    queryKey: ["handlers"] as const,
    queryFn: ({ signal }) => fetchJson<HandlersResponse>("/api/handlers", { signal }),
    refetchInterval: (q) => (q.state.data && !q.state.data.scan.done ? 1_000 : refetchInterval),
  });

/** Starts a fresh key count (`GET /api/handlers?refresh=1`, rate-limited by the server). */
export const refreshHandlers = () => fetchJson<HandlersResponse>("/api/handlers?refresh=1");

/** `GET /api/keys?prefix=&cursor=&count=`, page by page with the server's resumable cursor. */
export const keysInfiniteQuery = (prefix: string, count = 50, state: string | null = null) =>
  infiniteQueryOptions({
    queryKey: ["keys", prefix, count, state] as const,
    queryFn: ({ signal, pageParam }) => {
      const q = new URLSearchParams({ prefix, count: String(count) });
      if (state) q.set("state", state);
      if (pageParam) q.set("cursor", pageParam);
      return fetchJson<KeysResponse>(`/api/keys?${q}`, { signal });
    },
    initialPageParam: "" as string,
    getNextPageParam: (last) => last.cursor ?? undefined,
    staleTime: Infinity,
  });

/** `GET /api/keys/lookup?uuid=&prefix=` (`prefix`: the handler prefix on screen, checked too). */
export const keyLookupQuery = (uuid: string, prefix: string | null = null) =>
  queryOptions({
    queryKey: ["key-lookup", uuid, prefix] as const,
    queryFn: ({ signal }) =>
      fetchJson<KeyLookupResponse>(
        `/api/keys/lookup?uuid=${encodeURIComponent(uuid)}${prefix ? `&prefix=${encodeURIComponent(prefix)}` : ""}`,
        { signal },
      ),
    enabled: uuid.length > 0,
  });

// ---------------------------------------------------------------------------------------------
// Workshop and live demo

/** `GET /api/workshop/scenarios` */
export const scenariosQuery = () => polled<ScenarioList>(["workshop", "scenarios"], "/api/workshop/scenarios", 5_000);

/** `GET /api/workshop/runs/{runId}`: polls every 500 ms while the run is running. */
export const runQuery = (runId: string | null) =>
  queryOptions({
    queryKey: ["workshop", "run", runId] as const,
    queryFn: ({ signal }) => fetchJson<RunView>(`/api/workshop/runs/${encodeURIComponent(runId ?? "")}`, { signal }),
    enabled: runId !== null,
    refetchInterval: (q) => (q.state.data?.status === "running" || !q.state.data ? 500 : false),
  });

/**
 * A state-changing call: the JSON content type even without a body (proxy.ts refuses any other
 * state-changing request, 415), the presenter's token when one was entered, and `body` as JSON.
 */
export function send<T>(
  url: string,
  method: "POST" | "PUT" | "DELETE",
  token: string | null,
  body?: unknown,
): Promise<T> {
  const headers = { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
  return fetchJson<T>(url, body === undefined ? { method, headers } : { method, headers, body: JSON.stringify(body) });
}

/** `POST /api/workshop/scenarios/{name}/runs` */
export const startRun = (name: string, token: string | null, pace: RunPace = "fast") =>
  send<RunCreated>(`/api/workshop/scenarios/${encodeURIComponent(name)}/runs?pace=${pace}`, "POST", token);

/** One switch panel of the live demo, `GET|PUT /api/demo/<name>`: read every 5 s, written with a patch of its fields. */
function demoSwitch<T, Patch>(name: "sources" | "faults") {
  const url = `/api/demo/${name}`;
  return {
    query: () => polled<T>(["demo", name], url, 5_000),
    put: (patch: Patch, token: string | null) => send<T>(url, "PUT", token, patch),
  };
}

const demoSources = demoSwitch<DemoSources, DemoSourcesPatch>("sources");
/** `GET /api/demo/sources` */
export const sourcesQuery = demoSources.query;
/** `PUT /api/demo/sources` */
export const putSources = demoSources.put;

/** `GET /api/demo/effects`: the live demo's totals in this process, read every 2 s (the page subtracts its marker). */
export const demoEffectsQuery = () => polled<DemoEffects>(["demo", "effects"], "/api/demo/effects", 2_000);

/** `GET /api/events?range=&service=&handler=`: the chart markers of the range. */
export const eventsQuery = (
  p: { range: RangeKey; service?: string | undefined; handler?: string | undefined },
  refetchInterval: Interval,
) => {
  const qs = new URLSearchParams({ range: p.range });
  if (p.service) qs.set("service", p.service);
  if (p.handler) qs.set("handler", p.handler);
  return polled<EventsResponse>(
    ["events", p.range, p.service ?? "", p.handler ?? ""],
    `/api/events?${qs.toString()}`,
    refetchInterval,
  );
};

/** `GET /api/silences` */
export const silencesQuery = (refetchInterval: Interval) =>
  polled<SilencesResponse>(["silences"], "/api/silences", refetchInterval);

/** `POST /api/silences` */
export const postSilence = (body: SilenceCreate, token: string | null) =>
  send<SilenceAnswer>("/api/silences", "POST", token, body);

/** `DELETE /api/silences/{id}` (expire) */
export const deleteSilence = (id: string, token: string | null) =>
  send<SilenceAnswer>(`/api/silences/${encodeURIComponent(id)}`, "DELETE", token);

const demoFaults = demoSwitch<DemoFaults, DemoFaultsPatch>("faults");
/** `GET /api/demo/faults` */
export const faultsQuery = demoFaults.query;
/** `PUT /api/demo/faults` */
export const putFaults = demoFaults.put;
