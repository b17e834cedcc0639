/**
 * What each service exports and whether it is scraped, read from the metrics source (Prometheus, or
 * in embedded mode the app's registry): the figures that need an optional signal say "not measured
 * for this service" where its series do not exist, and every figure of a service whose series went
 * stale says "no scrape since …" instead of the last rate.
 */
import type { MeasuredField, ScrapeState } from "@/lib/api/measured";
import { noScrapeSinceText, notMeasuredText, OPTIONAL_SIGNALS, type OptionalSignal } from "@/lib/signals";
import type { MetricsSource, Sample } from "../metrics/source";
import { got } from "./upstream";

/** How far back the last scrape of a down service is looked for (seconds), and the step of that look. */
const LOOKBACK_SEC = 3600;
const LOOKBACK_STEP_SEC = 5;

/** What the source says each service exports; `null` when it could not be read (then nothing is claimed either way). */
export interface Signals {
  /** Optional metric names each service has series of now. */
  exported: Map<string, Set<string>> | null;
  /** Services with a live core series now (their scrape succeeded within the staleness window). */
  live: Set<string> | null;
  /** The last scrape of each service that is not live but was within the last hour (ISO). */
  lastScrape: Map<string, string>;
}

/**
 * Reads {@link Signals} at `at` (Unix seconds); `services` are the ones the answer shows (only their
 * down ones are looked back for; a promise, so the two instant queries can start before the caller
 * knows its rows).
 */
export async function readSignals(
  metrics: Pick<MetricsSource, "instant" | "range" | "kind">,
  at: number,
  services: Iterable<string> | PromiseLike<Iterable<string>>,
): Promise<Signals> {
  const [exported, scraped] = await Promise.all([
    got(metrics.instant("exported_signals", at)),
    got(metrics.instant("scrape_time", at)),
  ]);
  // The embedded source samples this process's own registry: nothing there is ever "not scraped".
  const live =
    scraped.ok && metrics.kind === "prometheus"
      ? new Set(scraped.value.flatMap((s) => (s.labels.service ? [s.labels.service] : [])))
      : null;
  const lastScrape = new Map<string, string>();
  const down = live ? [...(await services)].filter((s) => !live.has(s)) : [];
  if (down.length) {
    const past = await got(metrics.range("scrape_time", at - LOOKBACK_SEC, at, LOOKBACK_STEP_SEC));
    for (const s of past.ok ? past.value : []) {
      const svc = s.labels.service;
      const last = s.points.reduce((m, [, v]) => (v !== null && v > m ? v : m), -Infinity);
      if (svc && down.includes(svc) && Number.isFinite(last)) lastScrape.set(svc, new Date(last * 1000).toISOString());
    }
  }
  return { exported: exported.ok ? byService(exported.value) : null, live, lastScrape };
}

function byService(samples: readonly Sample[]): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const s of samples) {
    if (!s.labels.service || !s.labels.metric) continue;
    const set = m.get(s.labels.service) ?? new Set<string>();
    set.add(s.labels.metric);
    m.set(s.labels.service, set);
  }
  return m;
}

/**
 * Whether `service` exports `signal`: `{status:"ok"}`, or "unknown" with the metric it would need.
 * A source that could not be read claims nothing (ok: the figure then shows its own unavailability).
 */
export function measured(sig: Signals, service: string, signal: OptionalSignal): MeasuredField {
  const metric = OPTIONAL_SIGNALS[signal];
  if (!sig.exported || sig.exported.get(service)?.has(metric)) return { status: "ok" };
  return { status: "unknown", metric, detail: notMeasuredText(metric) };
}

/**
 * The service's scrape state: down since its last scrape ("no scrape since …") when its series
 * were scraped within the hour and are stale now; live otherwise (nothing is claimed without a
 * last scrape to name).
 */
export function scrapeState(sig: Signals, service: string): ScrapeState {
  const last = sig.lastScrape.get(service);
  if (!sig.live || sig.live.has(service) || last === undefined) return { status: "live" };
  return { status: "down", lastScrapeAt: last, detail: noScrapeSinceText(last) };
}
