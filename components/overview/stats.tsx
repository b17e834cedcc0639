import type { OverviewHandler } from "@/lib/api-types";
import { formatBurst, formatCount, formatCountedAt, formatLeaseSplit, formatPercent, formatRate, formatSecondsAsMs } from "@/lib/format";
import { RATE_WINDOW_MS, THRESHOLDS } from "@/lib/thresholds";
import { isEmbeddedDetail, isPendingDetail, unavailableText, Stat } from "../panel";

type Field = { status: "ok" } | { status: "unavailable"; detail: string };

/** "X unavailable" for a field whose upstream did not answer, else the rendered value. */
function avail<T extends Field>(f: T, render: (ok: Extract<T, { status: "ok" }>) => string): string {
  return f.status === "ok" ? render(f as Extract<T, { status: "ok" }>) : unavailableText((f as { detail: string }).detail);
}

/** The headline numbers of one handler, each with its unit and against its threshold. */
export function HandlerStats({ h, projectedKeys }: { h: OverviewHandler; projectedKeys?: number | null }) {
  const ratio = h.duplicateRatio.status === "ok" ? h.duplicateRatio.value : null;
  const p99 = h.checkLatency.status === "ok" ? h.checkLatency.p99Seconds : null;
  const errors = h.errorRates.status === "ok" ? h.errorRates.total : null;
  return (
    <dl className="grid grid-cols-2 gap-3 sm:grid-cols-5">
      <Stat
        testId="stat-ratio"
        label="Duplicate ratio (5 min)"
        value={avail(h.duplicateRatio, (f) => (f.value === null ? "no traffic" : formatPercent(f.value)))}
        hint={`alert > ${formatPercent(THRESHOLDS.duplicateRatio)}, normal < ${formatPercent(THRESHOLDS.duplicateRatioNormal)}`}
        tone={ratio === null ? "neutral" : ratio > THRESHOLDS.duplicateRatio ? "bad" : ratio >= THRESHOLDS.duplicateRatioNormal ? "warn" : "ok"}
      />
      <Stat
        testId="stat-rate"
        label="Processed"
        value={avail(h.processedRate, (f) => formatRate(f.total, "msg"))}
        hint={h.processedRate.status === "ok" ? `${formatRate(h.processedRate.byResult.deduplicated)} deduplicated, ${formatRate(h.processedRate.byResult.error)} errors` : undefined}
      />
      <Stat
        testId="stat-p99"
        label="Redis check p99 (service)"
        value={avail(h.checkLatency, (f) => (f.p99Seconds === null ? "no checks" : formatSecondsAsMs(f.p99Seconds)))}
        hint={`alert > ${formatSecondsAsMs(THRESHOLDS.checkP99Seconds)}`}
        tone={p99 === null ? "neutral" : p99 > THRESHOLDS.checkP99Seconds ? "bad" : "ok"}
      />
      <Stat
        testId="stat-errors"
        label="Dedup errors (service)"
        value={avail(h.errorRates, (f) => formatRate(f.total, "errors"))}
        hint={[errors !== null && errors > 0 ? formatBurst(errors, RATE_WINDOW_MS, "error") : null, "alert > 0 errors/s"].filter(Boolean).join(" · ")}
        tone={errors === null ? "neutral" : errors > THRESHOLDS.errorRate ? "bad" : "ok"}
      />
      <Stat
        testId="stat-keys"
        label="Dedup keys (last count)"
        value={avail(h.keys, (f) => `${f.exact ? "" : "≈ "}${formatCount(f.count)}`)}
        hint={
          h.keys.status === "ok"
            ? // The count's clock time: local zone, so the server's paint and the browser's may differ.
              <span suppressHydrationWarning>{[
                h.keys.exact ? "exact" : `± ${formatCount(h.keys.errorBound)}`,
                // The last completed count with its time; a recount running now shows as progress.
                formatCountedAt(h.keys.countedAt, h.keys.recount),
                h.keys.count > 0 ? formatLeaseSplit(h.keys.settled, h.keys.processing, h.keys.leaseShare, !h.keys.splitExact) : null,
                projectedKeys !== undefined ? `projected ${projectedKeys === null ? "—" : formatCount(projectedKeys)}` : null,
                h.keys.noTtlCount > 0 ? `${formatCount(h.keys.noTtlCount)} without TTL!` : null,
              ]
                .filter(Boolean)
                .join(" · ")}</span>
            : isEmbeddedDetail(h.keys.detail)
              ? "no store to inspect"
              : isPendingDetail(h.keys.detail)
                ? "first key count still running"
                : h.keys.detail
        }
        tone={h.keys.status === "ok" && h.keys.noTtlCount > 0 ? "bad" : "neutral"}
      />
    </dl>
  );
}
