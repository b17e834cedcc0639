import type { ReactNode } from "react";

/** Upstream name shown in an "X unavailable" state, read from the API's `detail` ("prometheus: …"). */
export function upstreamName(detail: string, fallback = "Metrics"): string {
  const d = detail.toLowerCase();
  if (d.startsWith("prometheus")) return "Prometheus";
  if (d.startsWith("redis")) return "Redis";
  if (d.startsWith("kafka")) return "Kafka";
  return fallback;
}

/** A titled card; every dashboard panel is one. Server-renderable. */
export function Panel({
  title,
  description,
  actions,
  children,
  testId,
  className = "",
}: {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  testId?: string;
  className?: string;
}) {
  return (
    <section
      data-testid={testId}
      className={`rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:border-slate-800 dark:bg-slate-900 ${className}`}
    >
      <header className="mb-2 flex flex-wrap items-start justify-between gap-2">
        <div>
          <h3 className="text-base font-semibold text-slate-800 dark:text-slate-100">{title}</h3>
          {description ? <p className="text-sm text-slate-600 dark:text-slate-400">{description}</p> : null}
        </div>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** Loading state of a panel: a pulsing placeholder of the panel's height, announced politely. */
export function LoadingState({ label = "Loading…", height = 120 }: { label?: string; height?: number }) {
  return (
    <div
      role="status"
      aria-live="polite"
      data-state="loading"
      style={{ minHeight: height }}
      className="flex items-center justify-center rounded bg-slate-100/70 text-sm text-slate-500 motion-safe:animate-pulse dark:bg-slate-800/50 dark:text-slate-400"
    >
      {label}
    </div>
  );
}

/** Empty state: the query answered but there is nothing to draw (never a fake zero line). */
export function EmptyState({ children, height = 120 }: { children: ReactNode; height?: number }) {
  return (
    <div
      data-state="empty"
      style={{ minHeight: height }}
      className="flex items-center justify-center rounded border border-dashed border-slate-300 p-3 text-center text-sm text-slate-500 dark:border-slate-700 dark:text-slate-400"
    >
      {children}
    </div>
  );
}

/** Error state: an upstream that did not answer ("Prometheus unavailable") or an API error, with its detail. */
export function ErrorState({
  title,
  detail,
  height = 120,
  onRetry,
}: {
  title: string;
  detail?: string;
  height?: number;
  onRetry?: () => void;
}) {
  return (
    <div
      role="alert"
      data-state="error"
      style={{ minHeight: height }}
      className="flex flex-col items-center justify-center gap-1 rounded border border-red-200 bg-red-50 p-3 text-center text-sm text-red-800 dark:border-red-900 dark:bg-red-950/40 dark:text-red-200"
    >
      <strong className="font-semibold">{title}</strong>
      {detail ? <span className="max-w-prose break-words text-xs opacity-80">{detail}</span> : null}
      {onRetry ? (
        <button
          type="button"
          onClick={onRetry}
          className="mt-1 rounded border border-red-300 px-2 py-0.5 text-xs hover:bg-red-100 focus-visible:outline-2 dark:border-red-800 dark:hover:bg-red-900/50"
        >
          Retry
        </button>
      ) : null}
    </div>
  );
}

/** True for an "unavailable" that only means embedded mode has no such upstream (not an outage). */
export function isEmbeddedDetail(detail: string): boolean {
  return /^embedded|not configured/i.test(detail);
}

/** True for an "unavailable" that only means a first count is still running (not an outage). */
export function isPendingDetail(detail: string): boolean {
  return /still running|not finished|in progress/i.test(detail);
}

/** Short text of an unavailable field: "Prometheus unavailable", or "in-memory store" in embedded mode. */
export function unavailableText(detail: string, fallback = "Metrics"): string {
  if (isEmbeddedDetail(detail)) return "in-memory";
  if (isPendingDetail(detail)) return "counting…";
  return `${upstreamName(detail, fallback)} unavailable`;
}

/**
 * `{ status: "unavailable", detail }` of the API, drawn as an error state naming the upstream; in
 * embedded mode (no such upstream configured) a neutral note instead of an alarm.
 */
export function UnavailableState({ detail, fallback, height }: { detail: string; fallback?: string; height?: number }) {
  if (isEmbeddedDetail(detail)) return <EmptyState {...(height ? { height } : {})}>{detail}</EmptyState>;
  if (isPendingDetail(detail)) return <LoadingState label={detail} {...(height ? { height } : {})} />;
  return (
    <ErrorState
      title={`${upstreamName(detail, fallback)} unavailable`}
      detail={detail}
      {...(height ? { height } : {})}
    />
  );
}

/** A big number with its unit and a caption, for stat tiles. */
export function Stat({
  label,
  value,
  hint,
  tone = "neutral",
  testId,
}: {
  label: string;
  value: ReactNode;
  hint?: ReactNode;
  tone?: "neutral" | "ok" | "warn" | "bad";
  testId?: string;
}) {
  const tones = {
    neutral: "",
    ok: "text-emerald-700 dark:text-emerald-400",
    warn: "text-amber-700 dark:text-amber-400",
    bad: "text-red-700 dark:text-red-400",
  } as const;
  return (
    <div data-testid={testId} className="min-w-0">
      <div className="text-sm text-slate-600 dark:text-slate-300">{label}</div>
      <div className={`text-2xl font-semibold tabular-nums ${tones[tone]}`}>{value}</div>
      {hint ? <div className="text-sm text-slate-600 dark:text-slate-300">{hint}</div> : null}
    </div>
  );
}
