"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { ApiError } from "@/lib/query-options";
import { messageHref, recordsQuery } from "@/lib/record-queries";
import { useViewState } from "@/lib/url-state";
import { FIELD_CLASS } from "../field";
import { errorTitle } from "../query-state";
import { EmptyState, ErrorState, LoadingState, Panel } from "../panel";
import { RecordCard } from "./record-card";

const input = `font-mono ${FIELD_CLASS}`;

/** Topic and UUID search form; submitting puts `topic=` and `uuid=` in the URL. */
function UuidSearch({
  topic,
  uuid,
  onSearch,
}: {
  topic: string;
  uuid: string;
  onSearch: (topic: string, uuid: string) => void;
}) {
  const [t, setT] = useState(topic);
  const [u, setU] = useState(uuid);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (t.trim() && u.trim()) onSearch(t.trim(), u.trim());
  };
  return (
    <form onSubmit={submit} role="search" className="flex flex-wrap items-end gap-2">
      <label className="flex flex-col text-sm">
        <span>Topic</span>
        <input
          data-testid="record-topic"
          value={t}
          onChange={(e) => setT(e.target.value)}
          className={`w-56 ${input}`}
        />
      </label>
      <label className="flex flex-col text-sm">
        <span>Message UUID (_watermill_message_uuid)</span>
        <input
          data-testid="record-uuid-input"
          value={u}
          onChange={(e) => setU(e.target.value)}
          className={`w-80 ${input}`}
        />
      </label>
      <button
        type="submit"
        className="rounded bg-blue-700 px-3 py-1 text-sm text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
      >
        Find
      </button>
    </form>
  );
}

/**
 * The message page: `?topic=&partition=&offset=` shows that record; `?topic=&uuid=` lists the
 * records holding the UUID (a bounded newest-first scan), each with "open the message".
 */
export function MessageView() {
  const { params, set } = useViewState();
  const topic = params.get("topic") ?? "";
  const uuid = params.get("uuid") ?? "";
  const partition = params.get("partition");
  const offset = params.get("offset") ?? "";
  const at = uuid ? { topic, uuid } : { topic, partition: partition === null ? undefined : Number(partition), offset };
  const q = useQuery(recordsQuery(at));
  const asked = q.fetchStatus !== "idle" || q.data !== undefined || q.isError;
  return (
    <div className="space-y-4">
      <Panel
        title="Find a message by UUID"
        description="Newest first, within a bounded scan of the topic (records, bytes and time per request); only the consumer topics and their DLQ topics."
      >
        <UuidSearch
          key={`${topic}|${uuid}`}
          topic={topic}
          uuid={uuid}
          onSearch={(t, u) => set({ topic: t, uuid: u, partition: null, offset: null })}
        />
      </Panel>
      {!asked ? null : q.isPending ? (
        <LoadingState label="Reading the topic…" height={160} />
      ) : q.isError ? (
        <ErrorState
          title={errorTitle(q.error, "Record")}
          detail={q.error instanceof ApiError ? q.error.detail : String(q.error)}
          height={100}
        />
      ) : q.data.kind === "record" ? (
        <RecordCard record={q.data.record} />
      ) : (
        <Panel
          title={`Records with UUID ${q.data.uuid} in ${q.data.topic}`}
          description={`${q.data.scanned.records} records read in ${q.data.scanned.ms} ms${q.data.complete ? " — the whole topic" : ` — stopped by a bound (at most ${q.data.limits.records} records, ${Math.round(q.data.limits.bytes / 1048576)} MiB, ${q.data.limits.ms / 1000} s): older records were not searched`}`}
          testId="record-search"
        >
          {q.data.records.length === 0 ? (
            <EmptyState height={60}>
              No record with this UUID{q.data.complete ? "" : " in the part searched"}.
            </EmptyState>
          ) : (
            <ul className="space-y-2">
              {q.data.records.map((r) => (
                <li key={`${r.partition}:${r.offset}`} className="flex flex-wrap items-center gap-3 text-sm">
                  <span className="font-mono">
                    {r.topic} / {r.partition} / {r.offset}
                  </span>
                  <span className="text-slate-500">{r.timestamp}</span>
                  <Link
                    data-testid="open-message"
                    href={messageHref(r)}
                    className="text-blue-700 underline dark:text-blue-300"
                  >
                    open the message
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </Panel>
      )}
    </div>
  );
}
