"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import {
  DEMO_LIMITS,
  type DemoFaults,
  type DemoFaultsPatch,
  type DemoSources,
  type DemoSourcesPatch,
} from "@/lib/api/demo";
import { formatDurationMs, formatNumber, formatPercent } from "@/lib/format";
import { faultsQuery, putFaults, putSources, sourcesQuery } from "@/lib/query-options";
import { Panel } from "../panel";
import { QueryView } from "../query-state";
import { needsToken } from "./token";
import { MutationError } from "./token-field";

/** An accessible on/off switch. */
function Switch({
  label,
  on,
  onChange,
  disabled,
  testId,
  hint,
}: {
  label: string;
  on: boolean;
  onChange: (v: boolean) => void;
  disabled?: boolean;
  testId?: string;
  hint?: string;
}) {
  return (
    <div className="flex items-center justify-between gap-3 py-1">
      <span className="text-sm">
        <span id={`${testId}-l`}>{label}</span>
        {hint ? <span className="block text-xs text-slate-500 dark:text-slate-400">{hint}</span> : null}
      </span>
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-labelledby={`${testId}-l`}
        data-testid={testId}
        disabled={disabled}
        onClick={() => onChange(!on)}
        className={`relative h-6 w-11 shrink-0 rounded-full transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40 ${on ? "bg-blue-600" : "bg-slate-300 dark:bg-slate-600"}`}
      >
        <span
          aria-hidden
          className={`absolute top-0.5 h-5 w-5 rounded-full bg-white shadow transition-all ${on ? "left-5" : "left-0.5"}`}
        />
      </button>
    </div>
  );
}

/**
 * A number field applied on Enter or blur. A value outside [min, max] is not sent: the field keeps
 * it and says the range (the API would refuse it too).
 */
function NumberField({
  label,
  value,
  unit,
  min,
  max,
  step,
  onApply,
  testId,
}: {
  label: string;
  value: number;
  unit: string;
  min: number;
  max: number;
  step: number;
  onApply: (v: number) => void;
  testId: string;
}) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const apply = () => {
    if (text === null) return;
    const v = Number(text);
    if (text.trim() === "" || !Number.isFinite(v) || v < min || v > max) {
      setError(
        `${label}: ${text.trim() || "empty"} is outside ${min}–${max} ${unit}; not applied (still ${value} ${unit}).`,
      );
      return;
    }
    setError(null);
    setText(null);
    if (v !== value) onApply(v);
  };
  return (
    <div className="py-1">
      <label className="flex items-center justify-between gap-3 text-sm">
        <span>
          {label}{" "}
          <span className="text-xs text-slate-500 dark:text-slate-400">
            ({min}–{max})
          </span>
        </span>
        <span className="flex items-center gap-1">
          <input
            data-testid={testId}
            type="number"
            min={min}
            max={max}
            step={step}
            value={text ?? String(value)}
            onChange={(e) => setText(e.target.value)}
            onBlur={apply}
            onKeyDown={(e) => e.key === "Enter" && apply()}
            aria-invalid={error !== null}
            className="w-24 rounded border border-slate-300 bg-white px-2 py-0.5 text-right tabular-nums aria-invalid:border-red-600 dark:border-slate-700 dark:bg-slate-900"
          />
          <span className="w-10 text-xs text-slate-500">{unit}</span>
        </span>
      </label>
      {error ? (
        <p role="alert" data-testid={`${testId}-error`} className="text-xs text-red-700 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** Switches of the live demo's traffic, duplicate sources (spec §1) and store faults. */
export function LiveDemo({ token, onNeedToken }: { token: string | null; onNeedToken: () => void }) {
  const qc = useQueryClient();
  const sources = useQuery(sourcesQuery());
  const faults = useQuery(faultsQuery());
  const onError = (e: unknown) => needsToken(e) && onNeedToken();
  const setSources = useMutation({
    mutationFn: (p: DemoSourcesPatch) => putSources(p, token),
    onSuccess: (d) => qc.setQueryData<DemoSources>(sourcesQuery().queryKey, d),
    onError,
  });
  const setFaults = useMutation({
    mutationFn: (p: DemoFaultsPatch) => putFaults(p, token),
    onSuccess: (d) => qc.setQueryData<DemoFaults>(faultsQuery().queryKey, d),
    onError,
  });
  return (
    <div className="grid gap-4 md:grid-cols-2">
      <Panel
        title="Live demo: traffic and duplicate sources"
        description="The four sources of repeats of spec §1, on the running demo consumer (watch the Overview)."
        testId="demo-sources"
      >
        <QueryView query={sources} what="Demo sources" height={160}>
          {(s) => (
            <div className="divide-y divide-slate-100 dark:divide-slate-800">
              {!s.running ? (
                <p className="pb-1 text-xs text-amber-800 dark:text-amber-300">
                  The demo consumer is not running (DEMO=off): switches have no effect.
                </p>
              ) : null}
              <Switch
                testId="src-traffic"
                label="Demo traffic"
                hint={`${formatNumber(s.traffic.ratePerSec, 1)} messages/s`}
                on={s.traffic.enabled}
                onChange={(v) => setSources.mutate({ traffic: { enabled: v } })}
              />
              <NumberField
                testId="src-rate"
                label="Traffic rate"
                unit="msg/s"
                value={s.traffic.ratePerSec}
                min={DEMO_LIMITS.ratePerSec.min}
                max={DEMO_LIMITS.ratePerSec.max}
                step={1}
                onApply={(v) => setSources.mutate({ traffic: { ratePerSec: v } })}
              />
              <Switch
                testId="src-retry"
                label="(a) Retry on handler error"
                hint={`${formatPercent(s.retryOnError.rate)} of attempts fail`}
                on={s.retryOnError.enabled}
                onChange={(v) => setSources.mutate({ retryOnError: { enabled: v } })}
              />
              <Switch
                testId="src-rebalance"
                label="(b) Consumer-group rebalance"
                hint={`${s.rebalance.replicas} extra replicas every ${formatDurationMs(s.rebalance.periodMs)}`}
                on={s.rebalance.enabled}
                onChange={(v) => setSources.mutate({ rebalance: { enabled: v } })}
              />
              <Switch
                testId="src-forwarder"
                label="(c) Forwarder re-publish"
                hint={`${formatPercent(s.forwarderRepublish.rate)} re-sent after ${formatDurationMs(s.forwarderRepublish.delayMs)}`}
                on={s.forwarderRepublish.enabled}
                onChange={(v) => setSources.mutate({ forwarderRepublish: { enabled: v } })}
              />
              <Switch
                testId="src-restart"
                label="(d) Restart before commit"
                hint={`every ${formatDurationMs(s.restartBeforeCommit.periodMs)}`}
                on={s.restartBeforeCommit.enabled}
                onChange={(v) => setSources.mutate({ restartBeforeCommit: { enabled: v } })}
              />
              <MutationError error={setSources.error} />
            </div>
          )}
        </QueryView>
      </Panel>
      <Panel
        title="Live demo: store faults"
        description="Latency and errors on the dedup repository drive the p99 and error-reason panels."
        testId="demo-faults"
      >
        <QueryView query={faults} what="Store faults" height={160}>
          {(f) => (
            <div className="divide-y divide-slate-100 dark:divide-slate-800">
              <NumberField
                testId="fault-latency"
                label="Added latency per check"
                unit="ms"
                value={f.latencyMs}
                min={DEMO_LIMITS.latencyMs.min}
                max={DEMO_LIMITS.latencyMs.max}
                step={5}
                onApply={(v) => setFaults.mutate({ latencyMs: v })}
              />
              <NumberField
                testId="fault-errors"
                label="Failing checks (redis_conn)"
                unit="%"
                value={Math.round(f.errorRate * 1000) / 10}
                min={DEMO_LIMITS.errorRate.min * 100}
                max={DEMO_LIMITS.errorRate.max * 100}
                step={1}
                onApply={(v) => setFaults.mutate({ errorRate: v / 100 })}
              />
              <Switch
                testId="fault-cutoff"
                label="Cut the consumer off from Redis (30 s)"
                hint={
                  f.redisCutoff.available
                    ? f.redisCutoff.active
                      ? `cut until ${f.redisCutoff.until ? new Date(f.redisCutoff.until).toLocaleTimeString() : "—"}`
                      : "connected"
                    : "real mode only"
                }
                on={f.redisCutoff.active}
                disabled={!f.redisCutoff.available}
                onChange={(v) => setFaults.mutate({ redisCutoffMs: v ? 30_000 : 0 })}
              />
              <MutationError error={setFaults.error} />
            </div>
          )}
        </QueryView>
      </Panel>
    </div>
  );
}
