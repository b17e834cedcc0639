"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
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
import { NumberField, Switch } from "./demo-fields";
import { MutationError } from "./token-field";
import { LiveEffects, useEffectsMark } from "./live-effects";

/** What a patch did, in the marker's words: `when "(a) Retry on handler error" was switched on`. */
const switched = (label: string, on: boolean) => `when “${label}” was switched ${on ? "on" : "off"}`;

/**
 * Switches of the live demo's traffic, duplicate sources (the four of the design note) and store faults, with what they
 * do beside them (one screen at 1280×720): flipping one moves the figures' marker to now.
 */
export function LiveDemo({ token, onNeedToken }: { token: string | null; onNeedToken: () => void }) {
  const qc = useQueryClient();
  const sources = useQuery(sourcesQuery());
  const faults = useQuery(faultsQuery());
  const effects = useEffectsMark();
  const onError = (e: unknown) => needsToken(e) && onNeedToken();
  const setSources = useMutation({
    mutationFn: ({ p }: { p: DemoSourcesPatch; why: string }) => putSources(p, token),
    onSuccess: (d, v) => {
      qc.setQueryData<DemoSources>(sourcesQuery().queryKey, d);
      void effects.restart(v.why);
    },
    onError,
  });
  const setFaults = useMutation({
    mutationFn: ({ p }: { p: DemoFaultsPatch; why: string }) => putFaults(p, token),
    onSuccess: (d, v) => {
      qc.setQueryData<DemoFaults>(faultsQuery().queryKey, d);
      void effects.restart(v.why);
    },
    onError,
  });
  return (
    <section id="live-demo" aria-label="Live demo" className="grid scroll-mt-2 gap-4 lg:grid-cols-2">
      <div className="space-y-4">
        <Panel
          title="Live demo: traffic and duplicate sources"
          description="The four sources of repeats — (a) a retry after a handler error, (b) a rebalance, (c) a forwarder that re-publishes, (d) a restart before the commit — on the running demo consumer: the figures beside show each one's effect."
          testId="demo-sources"
        >
          <QueryView query={sources} what="Demo sources" height={160}>
            {(s) => <SourcesFields s={s} set={(p, why) => setSources.mutate({ p, why })} error={setSources.error} />}
          </QueryView>
        </Panel>
        <Panel
          title="Live demo: store faults"
          description="Latency and errors on the dedup repository: the p99 bucket and store errors beside, the Overview's p99 and error panels."
          testId="demo-faults"
        >
          <QueryView query={faults} what="Store faults" height={160}>
            {(f) => <FaultsFields f={f} set={(p, why) => setFaults.mutate({ p, why })} error={setFaults.error} />}
          </QueryView>
        </Panel>
      </div>
      <div className="self-start lg:sticky lg:top-2">
        <LiveEffects {...effects} />
      </div>
    </section>
  );
}

/** The traffic switch and rate, and one switch per duplicate source; `set` sends a patch. */
function SourcesFields({
  s,
  set,
  error,
}: {
  s: DemoSources;
  set: (p: DemoSourcesPatch, why: string) => void;
  error: unknown;
}) {
  return (
    <div className="divide-y divide-slate-100 dark:divide-slate-800">
      {!s.running ? (
        <p className="pb-1 text-base text-amber-800 dark:text-amber-300">
          The demo consumer is not running (DEMO=off): switches have no effect.
        </p>
      ) : null}
      <Switch
        testId="src-traffic"
        label="Demo traffic"
        hint={`${formatNumber(s.traffic.ratePerSec, 1)} messages/s`}
        on={s.traffic.enabled}
        onChange={(v) => set({ traffic: { enabled: v } }, switched("Demo traffic", v))}
      />
      <NumberField
        testId="src-rate"
        label="Traffic rate"
        unit="msg/s"
        value={s.traffic.ratePerSec}
        min={DEMO_LIMITS.ratePerSec.min}
        max={DEMO_LIMITS.ratePerSec.max}
        step={1}
        onApply={(v) => set({ traffic: { ratePerSec: v } }, `when the traffic rate became ${v} msg/s`)}
      />
      <Switch
        testId="src-retry"
        label="(a) Retry on handler error"
        hint={`${formatPercent(s.retryOnError.rate)} of attempts fail: watch “Handler errors, retried” beside`}
        on={s.retryOnError.enabled}
        onChange={(v) => set({ retryOnError: { enabled: v } }, switched("(a) Retry on handler error", v))}
      />
      <Switch
        testId="src-rebalance"
        label="(b) Consumer-group rebalance"
        hint={`${s.rebalance.replicas} extra replicas every ${formatDurationMs(s.rebalance.periodMs)}`}
        on={s.rebalance.enabled}
        onChange={(v) => set({ rebalance: { enabled: v } }, switched("(b) Consumer-group rebalance", v))}
      />
      <Switch
        testId="src-forwarder"
        label="(c) Forwarder re-publish"
        hint={`${formatPercent(s.forwarderRepublish.rate)} re-sent after ${formatDurationMs(s.forwarderRepublish.delayMs)}`}
        on={s.forwarderRepublish.enabled}
        onChange={(v) => set({ forwarderRepublish: { enabled: v } }, switched("(c) Forwarder re-publish", v))}
      />
      <Switch
        testId="src-restart"
        label="(d) Restart before commit"
        hint={`every ${formatDurationMs(s.restartBeforeCommit.periodMs)}`}
        on={s.restartBeforeCommit.enabled}
        onChange={(v) => set({ restartBeforeCommit: { enabled: v } }, switched("(d) Restart before commit", v))}
      />
      <MutationError error={error} />
    </div>
  );
}

/** The store faults: added latency, failing checks, the Redis cut-off; `set` sends a patch. */
function FaultsFields({
  f,
  set,
  error,
}: {
  f: DemoFaults;
  set: (p: DemoFaultsPatch, why: string) => void;
  error: unknown;
}) {
  return (
    <div className="divide-y divide-slate-100 dark:divide-slate-800">
      <NumberField
        testId="fault-latency"
        label="Added latency per check"
        unit="ms"
        value={f.latencyMs}
        min={DEMO_LIMITS.latencyMs.min}
        max={DEMO_LIMITS.latencyMs.max}
        step={5}
        onApply={(v) => set({ latencyMs: v }, `when the added latency became ${v} ms`)}
      />
      <NumberField
        testId="fault-errors"
        label="Failing checks (redis_conn)"
        unit="%"
        value={Math.round(f.errorRate * 1000) / 10}
        min={DEMO_LIMITS.errorRate.min * 100}
        max={DEMO_LIMITS.errorRate.max * 100}
        step={1}
        onApply={(v) => set({ errorRate: v / 100 }, `when failing checks became ${v} %`)}
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
        onChange={(v) => set({ redisCutoffMs: v ? 30_000 : 0 }, switched("Cut the consumer off from Redis", v))}
      />
      <MutationError error={error} />
    </div>
  );
}
