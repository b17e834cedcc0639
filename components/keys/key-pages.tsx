"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { KEY_STATE_LABELS, keyStateSchema } from "@/lib/api/common";
import type { KeyEntry } from "@/lib/api/keys";
import { formatCount, formatCountedAt } from "@/lib/format";
import { keysToCsv, keysToJson, sortKeys, type KeySort } from "@/lib/key-export";
import { handlersQuery, keysInfiniteQuery, ApiError } from "@/lib/query-options";
import { errorTitle } from "../query-state";
import { LabeledSelect, type SelectOption } from "../field";
import { EmptyState, ErrorState, LoadingState, Panel } from "../panel";
import { KeyTable } from "./key-table";
import { RateLimitNotice, rateLimitRetry, retryAfterMs } from "./rate-limit";
import { useStoreWords } from "../store-words";
import { STORE_WORDS, type StoreWords } from "@/lib/store-words";

/** Keys per page in the key browser. */
export const PAGE_SIZE = 50;

const btn =
  "rounded border border-slate-300 px-3 py-1 text-sm hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 disabled:opacity-40 dark:border-slate-700 dark:hover:bg-slate-800";

/** Offers `text` as a file download (the page's keys as CSV or JSON). */
function download(text: string, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The key states the page may be filtered to (`""`: any). */
const STATE_CHOICES = [
  { value: "", label: "any" },
  ...keyStateSchema.options.map((s) => ({ value: s, label: KEY_STATE_LABELS[s] })),
];

/** The sorts of a page; the first is the order the store gave it in, in its words. */
const sortChoices = (words: StoreWords): readonly SelectOption<KeySort>[] => [
  { value: "scan", label: words.order },
  { value: "ttl", label: "TTL left" },
  { value: "size", label: "size" },
];

/** The state filter, the sort of the page and its export as CSV or JSON (named after the prefix and page). */
function PageTools({
  state,
  onState,
  sort,
  onSort,
  shown,
  file,
  words,
}: {
  words: StoreWords;
  state: string;
  onState: (s: string) => void;
  sort: KeySort;
  onSort: (s: KeySort) => void;
  shown: KeyEntry[];
  file: string;
}) {
  return (
    <div className="flex flex-wrap items-center gap-2 text-sm">
      <LabeledSelect label="State" testId="key-state-filter" value={state} options={STATE_CHOICES} onChange={onState} />
      <LabeledSelect label="Sort page" testId="key-sort" value={sort} options={sortChoices(words)} onChange={onSort} />
      <button
        type="button"
        className={btn}
        disabled={!shown.length}
        onClick={() => download(keysToCsv(shown), `${file}.csv`, "text/csv")}
      >
        CSV
      </button>
      <button
        type="button"
        className={btn}
        disabled={!shown.length}
        onClick={() => download(keysToJson(shown), `${file}.json`, "application/json")}
      >
        JSON
      </button>
    </div>
  );
}

/**
 * The pages of `prefix`'s keys (of `state`, filtered on the server) and the one on screen: pages
 * scanned are kept, so Previous shows them again; Next scans one more SCAN step when on the last.
 */
function useKeyPaging(prefix: string, state: string) {
  const q = useInfiniteQuery({ ...keysInfiniteQuery(prefix, PAGE_SIZE, state || null), ...rateLimitRetry });
  const [page, setPage] = useState(0);
  const pages = q.data?.pages ?? [];
  const current = pages[page];
  const next = async () => {
    if (page >= pages.length - 1) {
      const r = await q.fetchNextPage();
      if (r.isError) return;
    }
    setPage((p) => p + 1);
  };
  return {
    q,
    page,
    current,
    /** Keys the server's SCAN visited up to this page (any state). */
    visited: pages.slice(0, page + 1).reduce((a, p) => a + p.visited, 0),
    /** How many keys the pages before this one showed. */
    first: pages.slice(0, page).reduce((a, p) => a + p.keys.length, 0),
    hasNext: page < pages.length - 1 || q.hasNextPage,
    next,
    previous: () => setPage((p) => Math.max(0, p - 1)),
    restart: () => setPage(0),
  };
}

type KeyPaging = ReturnType<typeof useKeyPaging>;

/** Previous / Next, which keys the page shows, and how many keys were scanned of the prefix's count. */
function PageNav({ p, onPage, scanned }: { p: KeyPaging; onPage: number; scanned: ReactNode }) {
  return (
    <div className="flex flex-wrap items-center gap-3 text-sm">
      <button type="button" className={btn} onClick={p.previous} disabled={p.page === 0} aria-label="Previous page">
        ← Previous
      </button>
      <span data-testid="page-indicator" aria-live="polite">
        Page {p.page + 1}
        {onPage > 0 ? ` · keys ${p.first + 1}–${p.first + onPage}` : " · no key on this page"}
        {!p.hasNext ? " · end of scan" : ""}
      </span>
      <button
        type="button"
        className={btn}
        onClick={() => void p.next()}
        disabled={!p.hasNext || p.q.isFetchingNextPage}
        aria-label="Next page"
      >
        {p.q.isFetchingNextPage ? "Scanning…" : "Next →"}
      </button>
      <span data-testid="scanned" className="ml-auto text-xs text-slate-500 dark:text-slate-400">
        {scanned}
      </span>
    </div>
  );
}

/** The page on screen: its navigation, a failed Next, and its keys as sorted. */
function CurrentPage({
  p,
  onPage,
  shown,
  prefix,
  scanned,
}: {
  p: KeyPaging;
  onPage: number;
  shown: KeyEntry[];
  prefix: string;
  scanned: ReactNode;
}) {
  return (
    <div className="space-y-2">
      <PageNav p={p} onPage={onPage} scanned={scanned} />
      {p.q.isFetchNextPageError ? (
        <p role="alert" className="text-xs text-red-700">
          {retryAfterMs(p.q.error) !== null
            ? "Next page: the Redis budget stayed busy; try Next again"
            : errorTitle(p.q.error, "Next page")}
        </p>
      ) : null}
      {onPage === 0 ? (
        <EmptyState height={80}>
          {p.hasNext ? "This SCAN step matched no key; go on with Next." : "No key under this prefix."}
        </EmptyState>
      ) : (
        <KeyTable keys={shown} caption={`Keys ${p.first + 1} to ${p.first + onPage} of ${prefix}`} />
      )}
    </div>
  );
}

/**
 * The keys of one handler prefix, page by page with the server's resumable SCAN cursor; filtered
 * by state on the server (the stuck leases: `processing`), a page sorted by TTL or size and
 * exported as CSV or JSON.
 */
export function KeyPages({ prefix }: { prefix: string }) {
  const appWords = useStoreWords();
  const [state, setState] = useState<string>("");
  const [sort, setSort] = useState<KeySort>("scan");
  const p = useKeyPaging(prefix, state);
  const { q, current } = p;
  // The prefix's count as the tree beside shows it (the same /api/handlers answer), with its time.
  const counted = useQuery({
    ...handlersQuery(false),
    select: (d) => d.handlers.find((h) => h.prefix === prefix) ?? null,
  });
  // The inbox's rows are named as such, whatever store the rest of the app keeps its keys in.
  const inInbox = current?.store === "postgres-inbox" || counted.data?.store === "postgres-inbox";
  const words = inInbox ? STORE_WORDS["postgres-inbox"] : appWords;
  const shown = current ? sortKeys(current.keys, sort) : [];
  const file = `${prefix.replace(/[^A-Za-z0-9._-]+/g, "_")}-page${p.page + 1}`;
  const tools = (
    <PageTools
      state={state}
      onState={(s) => (setState(s), p.restart())}
      sort={sort}
      onSort={setSort}
      shown={shown}
      file={file}
      words={words}
    />
  );
  const scanned = (
    <>
      {inInbox ? "read" : "scanned"} {formatCount(p.visited, words.keys)} of{" "}
      {counted.data ? formatCount(counted.data.keyCount, words.keys) : "—"} under this prefix {words.inStore}
      {counted.data ? ` (count ${formatCountedAt(counted.data.countedAt, null)})` : ""}
    </>
  );
  return (
    <Panel
      title={<span className="font-mono">{prefix}:</span>}
      description={
        inInbox
          ? `Rows of this handler ${words.inStore}, page by page in primary-key order (expired rows left out); a state filter may leave pages with few rows.`
          : "Keys of this handler, page by page (SCAN with a resumable cursor); a state filter may leave pages with few keys."
      }
      actions={tools}
      testId="key-pages"
    >
      <RateLimitNotice reason={q.failureReason} fetching={q.isFetching} />
      {q.isPending ? (
        <LoadingState label="Scanning keys…" height={200} />
      ) : q.isError && !current ? (
        <ErrorState
          title={errorTitle(q.error, "Keys")}
          detail={q.error instanceof ApiError ? q.error.detail : String(q.error)}
          height={200}
          onRetry={() => void q.refetch()}
        />
      ) : current ? (
        <CurrentPage p={p} onPage={current.keys.length} shown={shown} prefix={prefix} scanned={scanned} />
      ) : null}
    </Panel>
  );
}
