"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { HandlerKeys, HandlersResponse } from "@/lib/api/handlers";
import { formatCount, formatCountedAt, formatPercent, scanFraction } from "@/lib/format";
import { handlersQuery, refreshHandlers, ApiError } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { EmptyState, ErrorState, Panel } from "../panel";
import { QueryView } from "../query-state";
import { useStoreWords } from "../store-words";
import { STORE_WORDS } from "@/lib/store-words";

/**
 * The count on screen and its time — the last completed one, the same every page shows — and, while
 * a recount runs, its progress as a percentage and a bar: "2,013 keys at 18:20:04 · recount 40%".
 */
export function ScanProgress({
  scan,
  keys,
  countedAt,
}: {
  scan: { scanned: number; total: number; done: boolean; mode: string };
  keys: number | null;
  countedAt: string | null;
}) {
  const f = scanFraction(scan);
  return (
    <div data-testid="scan-progress" className="space-y-1 text-xs text-slate-600 dark:text-slate-300">
      <label className="block">
        {keys === null ? "No completed count yet" : `${formatCount(keys)} ${formatCountedAt(countedAt, null)}`}
        {f !== null ? ` · ${keys === null ? "counting" : "recount"} ${Math.floor(f * 100)}% (${scan.mode})` : ""}
        {f !== null ? <progress className="mt-1 block h-2 w-full" max={1} value={f} /> : null}
      </label>
    </div>
  );
}

/** One handler of the tree: its name and key count (≈ when estimated, ⚠ with keys without a TTL, its share of leases). */
function HandlerButton({
  h,
  selected,
  onSelect,
}: {
  h: HandlerKeys;
  selected: boolean;
  onSelect: (prefix: string) => void;
}) {
  return (
    <button
      type="button"
      data-testid="tree-handler"
      aria-current={selected ? "true" : undefined}
      onClick={() => onSelect(h.prefix)}
      className={`flex w-full justify-between gap-2 rounded px-1 py-0.5 text-left hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-slate-800 ${selected ? "bg-blue-50 font-medium text-blue-900 dark:bg-blue-950 dark:text-blue-100" : ""}`}
    >
      <span className="truncate">
        {h.handler}
        {h.store === "postgres-inbox" ? (
          <span
            data-testid="tree-store"
            className="ml-1 rounded bg-slate-100 px-1 text-xs text-slate-600 dark:bg-slate-800 dark:text-slate-300"
            title={`rows ${STORE_WORDS["postgres-inbox"].inStore}`}
          >
            inbox
          </span>
        ) : null}
      </span>
      <span className="shrink-0 text-xs tabular-nums text-slate-500">
        {h.exact ? "" : "≈"}
        {formatCount(h.keyCount)}
        {h.noTtlCount > 0 ? " ⚠" : ""}
        {h.byState.processing > 0 ? (
          <span
            data-testid="tree-lease-share"
            className="ml-1 text-amber-700 dark:text-amber-300"
            title={`${formatCount(h.byState.processing, "processing leases")} of ${formatCount(h.keyCount)}`}
          >
            {formatPercent(h.leaseShare)} proc.
          </span>
        ) : null}
      </span>
    </button>
  );
}

/** The handlers grouped by service, each service with its total. */
function ServiceList({
  handlers,
  selected,
  onSelect,
}: {
  handlers: readonly HandlerKeys[];
  selected: string | null;
  onSelect: (prefix: string) => void;
}) {
  const byService = new Map<string, HandlerKeys[]>();
  for (const h of handlers) byService.set(h.service, [...(byService.get(h.service) ?? []), h]);
  return (
    <ul aria-label="Services" className="space-y-1 text-sm">
      {[...byService].map(([service, hs]) => (
        <li key={service}>
          <details open>
            <summary className="cursor-pointer rounded px-1 font-medium hover:bg-slate-100 dark:hover:bg-slate-800">
              {service}{" "}
              <span className="text-xs font-normal text-slate-500">
                ({formatCount(hs.reduce((a, h) => a + h.keyCount, 0))})
              </span>
            </summary>
            <ul
              aria-label={`Handlers of ${service}`}
              className="ml-3 border-l border-slate-200 pl-2 dark:border-slate-700"
            >
              {hs.map((h) => (
                <li key={h.prefix}>
                  <HandlerButton h={h} selected={selected === h.prefix} onSelect={onSelect} />
                </li>
              ))}
            </ul>
          </details>
        </li>
      ))}
    </ul>
  );
}

/**
 * The inbox table's handlers that were not counted (its database down, the table missing, the first
 * count running): each named "not measured" with the reason, never a count of 0. Selecting one
 * pages its rows, which says the same reason.
 */
function NotMeasured({
  inbox,
  selected,
  onSelect,
}: {
  inbox: HandlersResponse["inbox"];
  selected: string | null;
  onSelect: (prefix: string) => void;
}) {
  if (!inbox?.notMeasured.length) return null;
  return (
    <ul aria-label="Inbox handlers not measured" className="space-y-1 text-sm" data-testid="inbox-not-measured">
      {inbox.notMeasured.map((h) => (
        <li key={h.prefix}>
          <button
            type="button"
            aria-current={selected === h.prefix ? "true" : undefined}
            onClick={() => onSelect(h.prefix)}
            className="w-full rounded px-1 py-0.5 text-left hover:bg-slate-100 dark:hover:bg-slate-800"
          >
            <span className="font-mono text-xs">{h.prefix}</span>{" "}
            <span className="text-xs text-amber-800 dark:text-amber-300">
              not measured {STORE_WORDS["postgres-inbox"].inStore}: {h.reason}
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Why the key store has no tree (none configured, down), or null when it has one. */
function KeyStoreNotice({ d }: { d: HandlersResponse }) {
  if (d.store.status === "not-configured" && d.storeKind !== "memory")
    return (
      <EmptyState height={d.inbox ? 60 : 160}>
        No Redis configured: embedded mode keeps keys in an in-memory store, which has no key browser.
      </EmptyState>
    );
  if (d.store.status === "down")
    return <ErrorState title="Redis unavailable" detail={d.store.detail} height={d.inbox ? 60 : 160} />;
  return null;
}

/** The answer of /api/handlers: why there is no tree (no store, store down), or the count, the tree and the keys without a TTL. */
function HandlerCounts({
  d,
  selected,
  onSelect,
}: {
  d: HandlersResponse;
  selected: string | null;
  onSelect: (prefix: string) => void;
}) {
  const notice = <KeyStoreNotice d={d} />;
  const keyStoreOut = d.store.status === "down" || (d.store.status === "not-configured" && d.storeKind !== "memory");
  // Without the key store, the inbox table's part alone.
  if (keyStoreOut && !d.inbox) return notice;
  if (keyStoreOut)
    return (
      <div className="space-y-2">
        {notice}
        <ServiceList handlers={d.handlers} selected={selected} onSelect={onSelect} />
        <NotMeasured inbox={d.inbox} selected={selected} onSelect={onSelect} />
      </div>
    );
  return (
    <div className="space-y-2">
      <ScanProgress
        scan={d.scan}
        keys={d.handlers.length ? d.handlers.reduce((a, h) => a + h.keyCount, 0) : null}
        countedAt={d.handlers[0]?.countedAt ?? null}
      />
      {d.handlers.length === 0 ? (
        <p data-state="empty" className="text-sm text-slate-500 dark:text-slate-400">
          {d.scan.done ? `No key matches ${d.prefixes.join(", ")}.` : "The first count is running…"}
        </p>
      ) : (
        <ServiceList handlers={d.handlers} selected={selected} onSelect={onSelect} />
      )}
      <NotMeasured inbox={d.inbox} selected={selected} onSelect={onSelect} />
      {d.noTtlTotal > 0 ? (
        <p role="alert" className="text-xs text-red-700 dark:text-red-300">
          ⚠ {formatCount(d.noTtlTotal)} without a TTL: they never expire.
        </p>
      ) : null}
    </div>
  );
}

/** The prefix tree service → handler, with key counts, from /api/handlers. Selecting a handler sets `prefix=` in the URL. */
export function PrefixTree({ selected, onSelect }: { selected: string | null; onSelect: (prefix: string) => void }) {
  const words = useStoreWords();
  const { view } = useViewState();
  const qc = useQueryClient();
  const q = useQuery(handlersQuery(REFRESH_MS[view.refresh]));
  const recount = useMutation({
    mutationFn: refreshHandlers,
    onSuccess: (d) => qc.setQueryData(handlersQuery(false).queryKey, d),
  });
  return (
    <Panel
      title="Handlers"
      description={`Prefixes <service>:dedup:<handler> found ${words.inStore}${q.data?.inbox ? `, and those whose keys are rows ${STORE_WORDS["postgres-inbox"].inStore} (marked inbox)` : ""}`}
      testId="prefix-tree"
      actions={
        <button
          type="button"
          onClick={() => recount.mutate()}
          disabled={recount.isPending}
          className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 disabled:opacity-50 dark:border-slate-700 dark:hover:bg-slate-800"
        >
          Recount
        </button>
      }
    >
      {recount.isError ? (
        <p role="alert" className="mb-1 text-xs text-amber-800 dark:text-amber-300">
          {recount.error instanceof ApiError ? recount.error.detail : String(recount.error)}
        </p>
      ) : null}
      {recount.data && !recount.data.refresh.started ? (
        <p className="mb-1 text-xs text-slate-500">
          A count ran recently or is running; next recount allowed in{" "}
          {Math.ceil(recount.data.refresh.retryAfterMs / 1000)} s.
        </p>
      ) : null}
      <QueryView query={q} what="Key inspection" height={160}>
        {(d) => <HandlerCounts d={d} selected={selected} onSelect={onSelect} />}
      </QueryView>
    </Panel>
  );
}
