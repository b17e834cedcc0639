"use client";

import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { keyLookupQuery, ApiError } from "@/lib/query-options";
import { LOOKUP_INPUT_HINT, lookupText, parseLookupInput } from "@/lib/lookup-input";
import { FIELD_CLASS } from "../field";
import { errorTitle } from "../query-state";
import { EmptyState, ErrorState, LoadingState, Panel } from "../panel";
import { STORE_WORDS, type StoreKind } from "@/lib/store-words";
import { KeyTable } from "./key-table";
import { RateLimitNotice, rateLimitRetry } from "./rate-limit";

/** The lookup of `uuid` (under `prefix` when given), retried after a rate limit. */
function useLookupQuery(uuid: string, prefix: string | null) {
  return useQuery({ ...keyLookupQuery(uuid, prefix), ...rateLimitRetry });
}

/** What the lookup found: the keys that hold `uuid`, or why there are none (loading, error, no key). */
function LookupResult({ uuid, q }: { uuid: string; q: ReturnType<typeof useLookupQuery> }) {
  return (
    <div className="mt-3">
      <RateLimitNotice reason={q.failureReason} fetching={q.isFetching} />
      {q.isPending ? (
        <LoadingState label="Looking up…" height={60} />
      ) : q.isError ? (
        <ErrorState
          title={errorTitle(q.error, "Lookup")}
          detail={q.error instanceof ApiError ? q.error.detail : String(q.error)}
          height={60}
        />
      ) : q.data.matches.length === 0 && !q.data.notChecked?.length ? (
        <EmptyState height={60}>
          No key for {uuid} under the {q.data.checkedPrefixes} handler prefixes checked: never processed, or its window
          expired.
        </EmptyState>
      ) : (
        <>
          {q.data.matches.length ? <KeyTable keys={q.data.matches} caption={`Keys for ${uuid}`} showPrefix /> : null}
          {q.data.notChecked?.map((n) => (
            <p
              key={n.store}
              role="alert"
              data-testid="lookup-not-checked"
              className="text-xs text-amber-800 dark:text-amber-300"
            >
              Not checked {STORE_WORDS[n.store as StoreKind]?.inStore ?? `in ${n.store}`}: {n.reason}. Whether {uuid} is
              there is not known.
            </p>
          ))}
        </>
      )}
    </div>
  );
}

/**
 * Look up one message across every handler prefix (`uuid=` in the URL): a ULID (any case), a UUID
 * or a whole key as `redis-cli --scan` prints it (`lib/lookup-input.ts`); anything else is refused
 * here with the expected forms, before a request.
 */
export function KeyLookup({
  uuid,
  prefix = null,
  onLookup,
}: {
  uuid: string;
  prefix?: string | null;
  onLookup: (uuid: string | null) => void;
}) {
  const [text, setText] = useState(uuid);
  const [invalid, setInvalid] = useState<string | null>(null);
  const q = useLookupQuery(uuid, prefix);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (text.trim() === "") {
      setInvalid(null);
      return onLookup(null);
    }
    const p = parseLookupInput(text);
    if (!p.ok) return setInvalid(p.error);
    setInvalid(null);
    setText(lookupText(p));
    onLookup(lookupText(p));
  };
  return (
    <Panel
      title="Look up a message"
      description="Which handlers hold a key for this UUID, with state and TTL."
      testId="key-lookup"
    >
      <form onSubmit={submit} className="flex flex-wrap items-end gap-2" role="search">
        <label className="flex min-w-0 flex-1 flex-col text-sm">
          <span>Message id or whole key</span>
          <input
            data-testid="lookup-input"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="01JD8X3Q… or notification:dedup:<handler>:01JD8X3Q…"
            aria-describedby="lookup-hint"
            aria-invalid={invalid !== null}
            className={`w-full max-w-xl font-mono ${FIELD_CLASS}`}
          />
        </label>
        <button
          type="submit"
          className="rounded bg-blue-700 px-3 py-1 text-sm text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
        >
          Look up
        </button>
      </form>
      <p id="lookup-hint" className="mt-1 text-xs text-slate-500 dark:text-slate-400">
        Expected: {LOOKUP_INPUT_HINT}.
      </p>
      {invalid ? (
        <p role="alert" data-testid="lookup-invalid" className="mt-1 text-sm text-red-700 dark:text-red-300">
          {invalid}
        </p>
      ) : null}
      {uuid ? <LookupResult uuid={uuid} q={q} /> : null}
    </Panel>
  );
}
