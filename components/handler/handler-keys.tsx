"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import {
  formatBytes,
  formatCount,
  formatCountedAt,
  formatDurationMs,
  formatLeaseSplit,
  formatNumber,
  scanFraction,
} from "@/lib/format";
import type { HandlerKeys as HandlerKeyInfo, HandlersResponse } from "@/lib/api/handlers";
import { handlersQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState, hrefWithView } from "@/lib/url-state";
import { BucketChart } from "../charts/lazy";
import { EmptyState, ErrorState, Panel } from "../panel";
import { QueryView } from "../query-state";
import { useStoreWords } from "../store-words";
import { STORE_WORDS, type StoreWords } from "@/lib/store-words";

/** TTL distribution, sampled key states and bytes per key of one handler prefix (from /api/handlers). */
export function HandlerKeys({ service, handler }: { service: string; handler: string }) {
  const words = useStoreWords();
  const { view } = useViewState();
  const q = useQuery(handlersQuery(REFRESH_MS[view.refresh]));
  const own = q.data?.handlers.find((x) => x.service === service && x.handler === handler);
  const unmeasured = q.data?.inbox?.notMeasured.find((x) => x.service === service && x.handler === handler);
  const inInbox = own?.store === "postgres-inbox" || unmeasured !== undefined;
  return (
    <Panel
      title={
        inInbox
          ? "Rows in the PostgreSQL inbox: TTL distribution"
          : q.data?.storeKind === "memory"
            ? "Keys in the in-memory store: TTL distribution"
            : "Keys in Redis: TTL distribution"
      }
      description="Remaining TTL of the handler's keys, done apart from processing leases (amber: in flight, or abandoned until they expire); keys without TTL never expire (a bug)."
      testId="ttl-distribution"
    >
      <QueryView query={q} what="Key inspection" height={200}>
        {(d) => {
          if (unmeasured)
            return (
              <p data-state="not-measured" className="text-sm text-amber-800 dark:text-amber-300">
                Not measured {STORE_WORDS["postgres-inbox"].inStore}: {unmeasured.reason}.
              </p>
            );
          if (inInbox) return <HandlerKeysBody h={own!} scan={d.scan} words={STORE_WORDS["postgres-inbox"]} />;
          if (d.store.status === "not-configured" && d.storeKind !== "memory")
            return (
              <EmptyState height={200}>
                No Redis configured: embedded mode keeps keys in an in-memory store, not inspected here.
              </EmptyState>
            );
          if (d.store.status === "down")
            return <ErrorState title="Redis unavailable" detail={d.store.detail} height={200} />;
          const h = d.handlers.find((x) => x.service === service && x.handler === handler);
          if (!h)
            return (
              <p data-state="empty" className="text-sm text-slate-500 dark:text-slate-400">
                {d.scan.done
                  ? `No key under ${service}:dedup:${handler}: ${words.inStore}.`
                  : `No key under ${service}:dedup:${handler}: in the last completed count · recount ${Math.floor((scanFraction(d.scan) ?? 0) * 100)}%.`}
              </p>
            );
          return <HandlerKeysBody h={h} scan={d.scan} words={words} />;
        }}
      </QueryView>
    </Panel>
  );
}

/** A counted handler's TTL chart, state split, figures and the link to its keys. */
function HandlerKeysBody({ h, scan, words }: { h: HandlerKeyInfo; scan: HandlersResponse["scan"]; words: StoreWords }) {
  const { params } = useViewState();
  return (
    <div className="space-y-2">
      <BucketChart
        buckets={[...h.ttlBuckets, { label: "no TTL", count: h.noTtlCount, processing: 0 }]}
        label={`TTL distribution of ${h.prefix}`}
        testId="ttl-chart"
      />
      <p data-testid="lease-share" className="text-sm tabular-nums">
        {formatLeaseSplit(h.byState.done, h.byState.processing, h.leaseShare, !h.byState.exact)}
        {h.byState.marked ? ` · ${h.byState.exact ? "" : "≈ "}${formatNumber(h.byState.marked)} marked` : ""}
        {h.byState.other ? ` · ${h.byState.exact ? "" : "≈ "}${formatNumber(h.byState.other)} other` : ""}
        <span className="ml-2 text-xs text-slate-500 dark:text-slate-400">
          {h.byState.exact ? "every key read" : `scaled from a sample of ${h.sampleSize}`}
        </span>
      </p>
      <KeyFigures h={h} scan={h.store === "postgres-inbox" ? h.scan : scan} />
      <Link
        href={hrefWithView("/keys", params, { prefix: h.prefix })}
        className="text-sm text-blue-700 underline dark:text-blue-300"
      >
        Browse these {words.keys}
      </Link>
    </div>
  );
}

/** The prefix's figures: key count (and when counted), bytes per key, observed TTL, sampled states. */
function KeyFigures({ h, scan }: { h: HandlerKeyInfo; scan: HandlersResponse["scan"] }) {
  return (
    <dl className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
      <div>
        <dt className="text-xs text-slate-500">Keys</dt>
        <dd className="tabular-nums">
          {h.exact ? "" : "≈ "}
          {formatCount(h.keyCount)}
          {h.exact ? "" : ` ± ${formatCount(h.errorBound)}`}
          <span data-testid="counted-at" className="block text-xs text-slate-500 dark:text-slate-400">
            {formatCountedAt(h.countedAt, scanFraction(scan))}
          </span>
        </dd>
      </div>
      <div>
        <dt className="text-xs text-slate-500">Bytes per key</dt>
        <dd className="tabular-nums">
          {h.bytesEstimated
            ? `≈ ${formatBytes(h.bytesPerKey)} (estimated, in-memory store)`
            : formatBytes(h.bytesPerKey)}
        </dd>
      </div>
      <div>
        <dt className="text-xs text-slate-500">Observed TTL (min / p50 / max)</dt>
        <dd className="tabular-nums">
          {h.ttlObserved
            ? `${formatDurationMs(h.ttlObserved.minMs)} / ${formatDurationMs(h.ttlObserved.p50Ms)} / ${formatDurationMs(h.ttlObserved.maxMs)}`
            : "—"}
        </dd>
      </div>
      <div>
        <dt className="text-xs text-slate-500">States (sample of {h.sampleSize})</dt>
        <dd className="tabular-nums">
          {h.states.done} done · {h.states.processing} processing · {h.states.marked} marked · {h.states.other} other
        </dd>
      </div>
    </dl>
  );
}
