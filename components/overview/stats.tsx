import { useQuery } from "@tanstack/react-query";
import type { OverviewHandler } from "@/lib/api/overview";
import { countBehindTraffic, keyFigures, type KeyFigures } from "@/lib/key-figures";
import { useCatchUpCount } from "./catch-up-count";
import { useNow } from "../use-now";
import { handlersQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import {
  formatBurst,
  formatCount,
  formatCountedAt,
  formatLeaseSplit,
  formatPercent,
  formatRate,
  formatSecondsAsMs,
} from "@/lib/format";
import { THRESHOLDS } from "@/lib/thresholds";
import { CHECK_DURATION_BUCKETS } from "@/names/buckets";
import { formatQuantile } from "@/lib/quantile-bucket";
import { RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { staleSinceText } from "@/lib/on-call-text";
import { isNoScrapeDetail } from "@/lib/signals";
import { NowFigure, windowTone } from "./now-figure";
import type { QuietEvidence } from "@/lib/now-state";
import { OnCallNotes } from "./on-call-notes";
import { ScrapeAndSignalNotes } from "./handler-notes";
import { isEmbeddedDetail, isPendingDetail, unavailableText, Stat } from "../panel";

type Field = { status: "ok" } | { status: "unavailable"; detail: string };

/** "X unavailable" for a field whose upstream did not answer, else the rendered value. */
function avail<T extends Field>(f: T, render: (ok: Extract<T, { status: "ok" }>) => string): string {
  if (f.status === "ok") return render(f as Extract<T, { status: "ok" }>);
  const detail = (f as { detail: string }).detail;
  // A service not scraped: the figure is not "Metrics unavailable" (Prometheus answers), it is old.
  return isNoScrapeDetail(detail) ? detail : unavailableText(detail);
}

/** What each error reason means for the on-call (the runbook's DedupRedisErrors, in a phrase). */
export const REASON_MEANING: Record<string, string> = {
  marshal: "publisher bug: records without a usable UUID, sent to the DLQ",
  redis_conn: "Redis unreachable",
  redis_timeout: "checks slower than the timeout: Redis or the consumer slow",
};

/**
 * "mostly redis_conn, 99.6% of errors (Redis unreachable)": the reason with the highest rate, its
 * share of all the errors and its meaning; null without errors.
 */
export function topReasonText(byReason: Readonly<Record<string, number>>): string | null {
  const reasons = Object.entries(byReason)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]);
  const top = reasons[0];
  if (!top) return null;
  const share = top[1] / reasons.reduce((s, [, v]) => s + v, 0);
  return `mostly ${top[0]}, ${formatPercent(share)} of errors${REASON_MEANING[top[0]] ? ` (${REASON_MEANING[top[0]]})` : ""}`;
}

/**
 * The check p99's parts and verdict as the server worded them (lib/latency-split): "event loop p99
 * 80 ms · Redis 6 µs/call · the consumer is saturated (not Redis)", or "not known for this runtime".
 */
export function latencyPartsText(p: OverviewHandler["latencyParts"]): string | null {
  return p?.text || null;
}

/**
 * A tile of a 5-min figure with its "now" figure beside it (`<testId>-now`), red above the
 * threshold (amber while recovering), else `calm`; neutral without a figure.
 */
function WindowStat({
  testId,
  label,
  text,
  now,
  window,
  threshold,
  quiet,
  format,
  hint,
  calm = "ok",
}: {
  testId: string;
  label: string;
  text: string;
  now: number | null | undefined;
  window: number | null;
  threshold: number;
  quiet?: QuietEvidence;
  format: (v: number) => string;
  hint: string;
  calm?: "ok" | "warn";
}) {
  return (
    <Stat
      testId={testId}
      label={label}
      value={
        <>
          {text}
          <NowFigure
            now={now}
            window={window}
            threshold={threshold}
            quiet={quiet}
            format={format}
            testId={`${testId}-now`}
          />
        </>
      }
      hint={hint}
      tone={window === null ? "neutral" : (windowTone(now, window, threshold, quiet) ?? calm)}
    />
  );
}

/** The hint under a key count: stale since, exactness, when counted, lease split, projection, keys without TTL. */
function keysHint(
  keys: Extract<KeyFigures, { status: "ok" }>,
  staleSince: string | null | undefined,
  projectedKeys: number | null | undefined,
): string {
  return [
    staleSinceText(staleSince),
    keys.exact ? "exact" : `± ${formatCount(keys.errorBound)}`,
    // The last completed count with its time; a recount running now shows as progress.
    formatCountedAt(keys.countedAt, keys.recount),
    keys.count > 0 ? formatLeaseSplit(keys.settled, keys.processing, keys.leaseShare, !keys.splitExact) : null,
    projectedKeys !== undefined ? `projected ${projectedKeys === null ? "—" : formatCount(projectedKeys)}` : null,
    keys.noTtlCount > 0 ? `${formatCount(keys.noTtlCount)} without TTL!` : null,
  ]
    .filter(Boolean)
    .join(" · ");
}

/** Beside a count behind its traffic, while the recount it asked for runs: "≈ 26 messages since this count, recounting". */
export function behindText(messagesSince: number): string {
  return `≈ ${formatCount(messagesSince, messagesSince === 1 ? "message" : "messages")} since this count, recounting`;
}

/** The handler's key count tile: the last count with its time, exactness, lease split and keys without TTL. */
function KeysStat({ h, projectedKeys }: { h: OverviewHandler; projectedKeys: number | null | undefined }) {
  // The keys as every other panel of the page shows them: the one /api/handlers answer.
  const { view } = useViewState();
  const keys = keyFigures(useQuery(handlersQuery(REFRESH_MS[view.refresh])).data, h.service, h.handler);
  // Computed from the clock: after hydration only (the server's paint and the browser's would differ).
  const now = useNow(5_000);
  const behind =
    now === null ? null : countBehindTraffic(keys, h.processedRate.status === "ok" ? h.processedRate.total : null, now);
  useCatchUpCount(behind !== null);
  // Whether Redis can be read now is the overview answer's: the count above is kept with its time.
  const staleSince = h.keys.status === "ok" ? h.keys.staleSince : null;
  return (
    <Stat
      testId="stat-keys"
      label="Dedup keys (last count)"
      value={avail(keys, (f) => `${f.exact ? "" : "≈ "}${formatCount(f.count)}`)}
      hint={
        keys.status === "ok" ? (
          // The count's clock time: local zone, so the server's paint and the browser's may differ.
          <span suppressHydrationWarning>
            {`${behind !== null ? `${behindText(behind)} · ` : ""}${keysHint(keys, staleSince, projectedKeys)}`}
          </span>
        ) : isEmbeddedDetail(keys.detail) ? (
          "no store to inspect"
        ) : isPendingDetail(keys.detail) ? (
          "first key count still running"
        ) : (
          keys.detail
        )
      }
      tone={
        keys.status === "ok" && keys.noTtlCount > 0 ? "bad" : keys.status === "ok" && staleSince ? "warn" : "neutral"
      }
    />
  );
}

/**
 * Under the Processed tile: its deduplicated and failed deliveries, in messages/s. A failed delivery
 * (`result="error"`: to the DLQ or redelivered) is no dedup error, which the errors tile counts.
 */
export function processedHint(byResult: { deduplicated: number; error: number }): string {
  return `${formatRate(byResult.deduplicated, "msg")} deduplicated, ${formatRate(byResult.error, "msg")} failed (to the DLQ or redelivered)`;
}

/**
 * A dedup check quantile with the bucket it lies in: "248.5 ms (bucket 100–250 ms)". The figure is
 * interpolated inside that bucket, so 100 ms added per check reads as the 100–250 ms bucket.
 */
export function checkQuantileText(seconds: number): string {
  return formatQuantile(seconds, CHECK_DURATION_BUCKETS, formatSecondsAsMs);
}

/** The headline numbers of one handler, each with its unit and against its threshold. */
export function HandlerStats({ h, projectedKeys }: { h: OverviewHandler; projectedKeys?: number | null }) {
  const ratio = h.duplicateRatio.status === "ok" ? h.duplicateRatio.value : null;
  const p99 = h.checkLatency.status === "ok" ? h.checkLatency.p99Seconds : null;
  const errors = h.errorRates.status === "ok" ? h.errorRates.total : null;
  // "now" figures beside the 5-min ones (undefined: not in the answer; null: no value now).
  const now = h.now?.status === "ok" ? h.now : undefined;
  return (
    <>
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-5">
        <WindowStat
          testId="stat-ratio"
          label="Duplicate ratio (5 min)"
          text={avail(h.duplicateRatio, (f) => (f.value === null ? "no traffic" : formatPercent(f.value)))}
          now={now?.duplicateRatio}
          window={ratio}
          threshold={THRESHOLDS.duplicateRatio}
          format={(v) => formatPercent(v)}
          hint={`alert > ${formatPercent(THRESHOLDS.duplicateRatio)}, normal < ${formatPercent(THRESHOLDS.duplicateRatioNormal)}`}
          calm={ratio !== null && ratio >= THRESHOLDS.duplicateRatioNormal ? "warn" : "ok"}
        />
        <Stat
          testId="stat-rate"
          label="Processed (5 min)"
          value={avail(h.processedRate, (f) => formatRate(f.total, "msg"))}
          hint={h.processedRate.status === "ok" ? processedHint(h.processedRate.byResult) : undefined}
        />
        <WindowStat
          testId="stat-p99"
          label="Dedup check p99 (5 min), measured in the consumer (service)"
          text={avail(h.checkLatency, (f) => (f.p99Seconds === null ? "no checks" : checkQuantileText(f.p99Seconds)))}
          now={now?.checkP99Seconds}
          window={p99}
          quiet={{
            seconds: now?.slowCheckQuietSeconds,
            badRate: now?.slowCheckRate,
            nowSuffices: true,
            othersNow: now?.errorRate,
          }}
          threshold={THRESHOLDS.checkP99Seconds}
          format={checkQuantileText}
          hint={[latencyPartsText(h.latencyParts), `alert > ${formatSecondsAsMs(THRESHOLDS.checkP99Seconds)}`]
            .filter(Boolean)
            .join(" · ")}
        />
        <WindowStat
          testId="stat-errors"
          label="Dedup errors (5 min, service)"
          text={avail(h.errorRates, (f) => formatRate(f.total, "errors"))}
          now={now?.errorRate}
          window={errors}
          quiet={{ seconds: now?.errorQuietSeconds, badRate: errors }}
          threshold={THRESHOLDS.errorRate}
          format={(v) => formatRate(v, "errors")}
          hint={[
            errors !== null && errors > 0 ? formatBurst(errors, RATE_WINDOW_MS, "error") : null,
            h.errorRates.status === "ok" ? topReasonText(h.errorRates.byReason) : null,
            "alert > 0 errors/s",
          ]
            .filter(Boolean)
            .join(" · ")}
        />
        <KeysStat h={h} projectedKeys={projectedKeys} />
      </dl>
      <ScrapeAndSignalNotes h={h} />
      <OnCallNotes h={h} />
    </>
  );
}
