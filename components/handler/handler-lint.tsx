"use client";

import { useQuery } from "@tanstack/react-query";
import type { Finding } from "@/lib/api/common";
import { formatDurationMs } from "@/lib/format";
import { lintQuery } from "@/lib/query-options";
import { TTL_POLICY } from "@/names/keys";
import { Panel, UnavailableState } from "../panel";
import { QueryView } from "../query-state";
import { useStoreWords } from "../store-words";

const SEV: Record<Finding["severity"], string> = {
  error: "bg-red-100 text-red-900 dark:bg-red-900/50 dark:text-red-100",
  warning: "bg-amber-100 text-amber-900 dark:bg-amber-900/40 dark:text-amber-100",
  info: "bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200",
};

function Findings({ findings, source }: { findings: readonly Finding[]; source: string }) {
  if (findings.length === 0)
    return <p className="text-sm text-emerald-700 dark:text-emerald-400">{source}: no finding.</p>;
  return (
    <ul className="space-y-1" aria-label={`${source} findings`}>
      {findings.map((f, i) => (
        <li key={i} data-testid="finding" className="flex flex-wrap items-baseline gap-2 text-sm">
          <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${SEV[f.severity]}`}>{f.severity}</span>
          <code className="text-xs">{f.rule}</code>
          <span>{f.message}</span>
          <span className="text-xs text-slate-500 dark:text-slate-400">spec {f.specSection}</span>
        </li>
      ))}
    </ul>
  );
}

/** The panel's description: what is checked, the TTL policy in figures rather than a section number. */
export function lintDescription(inStore: string): string {
  const d = formatDurationMs;
  return (
    `The library's lint (lintHandler) on the declared setup, and the TTL policy on the TTLs seen ${inStore}: ` +
    `${d(TTL_POLICY.defaultMs)} by default, ${d(TTL_POLICY.criticalMs)} for critical events, at most ` +
    `${d(TTL_POLICY.analyticsMaxMs)} for analytics, never under ${d(TTL_POLICY.minimumMs)}.`
  );
}

/** The library lint of the declared handler and the TTL-policy check of its observed keys, each with its spec section. */
export function HandlerLint({ service, handler }: { service: string; handler: string }) {
  const words = useStoreWords();
  const q = useQuery(lintQuery());
  return (
    <Panel title="Lint" description={lintDescription(words.inStore)} testId="lint">
      <QueryView query={q} what="Lint" height={80}>
        {(d) => {
          const decl =
            d.declared.status === "ok"
              ? d.declared.handlers.find((h) => h.service === service && h.handler === handler)
              : undefined;
          const obs =
            d.observed.status === "ok"
              ? d.observed.handlers.find((h) => h.service === service && h.handler === handler)
              : undefined;
          return (
            <div className="space-y-2">
              {d.declared.status === "unavailable" ? (
                <UnavailableState detail={d.declared.detail} fallback="Library lint" height={60} />
              ) : decl ? (
                <Findings findings={decl.findings} source="Declared setup" />
              ) : (
                <p className="text-sm text-slate-500 dark:text-slate-400">
                  Not declared by this app (seen only {words.inStore} or in metrics).
                </p>
              )}
              {d.observed.status === "unavailable" ? (
                <UnavailableState detail={d.observed.detail} fallback={words.name} height={60} />
              ) : obs ? (
                <Findings findings={obs.findings} source="Observed TTLs" />
              ) : (
                <p className="text-sm text-slate-500 dark:text-slate-400">
                  No keys of this handler {words.inStore} to check.
                </p>
              )}
            </div>
          );
        }}
      </QueryView>
    </Panel>
  );
}
