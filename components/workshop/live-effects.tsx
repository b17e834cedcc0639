"use client";

/**
 * What the live demo's switches do, beside them: the demo's figures since a marker the presenter
 * sets ("Start from now") or that flipping a switch sets, so a switch's effect shows on the same
 * screen and the next demo does not start from the last one's window.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import type { DemoEffects } from "@/lib/api/demo";
import { effectsSince, type EffectsSince } from "@/lib/demo-effects";
import { formatClockSeconds, formatNumber, formatPercent } from "@/lib/format";
import { demoEffectsQuery } from "@/lib/query-options";
import { Panel } from "../panel";
import { QueryView } from "../query-state";

/** The marker the figures count from: the totals then, and why then. */
export interface EffectsMark {
  at: DemoEffects;
  why: string;
}

/** The marker and a way to move it to now (`why`: what the presenter did then). */
export function useEffectsMark() {
  const qc = useQueryClient();
  const [mark, setMark] = useState<EffectsMark | null>(null);
  const first = useQuery(demoEffectsQuery()).data;
  useEffect(() => {
    if (first && !mark) setMark({ at: first, why: "when this page opened" });
  }, [first, mark]);
  const restart = useCallback(
    async (why: string) => {
      const now = await qc.fetchQuery({ ...demoEffectsQuery(), staleTime: 0 });
      setMark({ at: now, why });
    },
    [qc],
  );
  return { mark, restart };
}

/** One figure, readable from the back of a room. */
function Figure({ id, label, value, sub }: { id: string; label: string; value: string; sub?: string }) {
  return (
    <div data-testid={`effect-${id}`} className="rounded-lg border border-slate-200 p-2 dark:border-slate-700">
      <dt className="text-lg text-slate-600 dark:text-slate-300">{label}</dt>
      <dd className="text-4xl font-bold tabular-nums leading-tight" data-testid={`effect-${id}-value`}>
        {value}
      </dd>
      {sub ? <dd className="text-base text-slate-600 dark:text-slate-300">{sub}</dd> : null}
    </div>
  );
}

/** The p99 check's bucket in words: "≤ 5 ms", "100–250 ms", "> 2500 ms"; no check since the marker says so. */
function p99Text(s: EffectsSince): string {
  const b = s.p99Bucket;
  if (!b) return "no check yet";
  if (b.high === null) return `> ${formatNumber(b.low, 1)} ms`;
  return b.low === 0 ? `≤ ${formatNumber(b.high, 1)} ms` : `${formatNumber(b.low, 1)}–${formatNumber(b.high, 1)} ms`;
}

function Figures({ s }: { s: EffectsSince }) {
  const c = s.counts;
  return (
    <dl className="grid grid-cols-2 gap-2">
      <Figure
        id="handler-errors"
        label="Handler errors, retried"
        value={formatNumber(c.handlerErrors)}
        sub={`${formatNumber(c.released)} keys released for the next attempt`}
      />
      <Figure
        id="deduplicated"
        label="Repeats swallowed"
        value={formatNumber(c.deduplicated)}
        sub={`${formatPercent(s.duplicateRatio)} of ${formatNumber(c.processed + c.deduplicated)} finished deliveries`}
      />
      <Figure id="poisoned" label="Sent to the DLQ" value={formatNumber(c.poisoned)} />
      <Figure id="dedup-errors" label="Store errors" value={formatNumber(c.dedupErrors)} />
      <Figure
        id="p99"
        label="Dedup check p99 (bucket)"
        value={p99Text(s)}
        sub={`over ${formatNumber(s.checks)} checks`}
      />
      <Figure
        id="duplicate-pushes"
        label="Pushes sent twice"
        value={formatNumber(c.duplicateSideEffects)}
        sub={`of ${formatNumber(c.sideEffects)} pushes`}
      />
    </dl>
  );
}

/** The panel: the figures since the marker, the marker's time and reason, and "Start from now". */
export function LiveEffects({ mark, restart }: ReturnType<typeof useEffectsMark>) {
  const q = useQuery(demoEffectsQuery());
  return (
    <Panel
      title="What the switches do, since the marker"
      description="The demo consumer of this process, counted from the marker: flipping a switch or “Start from now” moves it."
      testId="live-effects"
    >
      <QueryView query={q} what="Live demo figures" height={300}>
        {(now) =>
          !now.running ? (
            <p className="text-lg text-amber-800 dark:text-amber-300">
              The demo consumer is not running (DEMO=off): nothing is counted here.
            </p>
          ) : (
            <div className="space-y-2">
              <div className="flex flex-wrap items-center gap-3 text-lg">
                <span data-testid="effects-since" suppressHydrationWarning>
                  {mark
                    ? `Since ${formatClockSeconds(Date.parse(mark.at.at) / 1000)} (${formatNumber(effectsSince(mark.at, now).seconds)} s), ${mark.why}`
                    : "Since this page opened"}
                </span>
                <button
                  type="button"
                  data-testid="effects-restart"
                  onClick={() => void restart("when you started from now")}
                  className="ml-auto rounded-lg border border-blue-700 px-4 py-1.5 text-lg font-semibold text-blue-800 hover:bg-blue-50 dark:border-blue-400 dark:text-blue-200 dark:hover:bg-blue-950"
                >
                  Start from now
                </button>
              </div>
              <Figures s={effectsSince(mark?.at ?? now, now)} />
            </div>
          )
        }
      </QueryView>
    </Panel>
  );
}
