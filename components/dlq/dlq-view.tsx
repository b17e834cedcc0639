"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import type { DlqEntry, DlqResponse } from "@/lib/api/dlq";
import { POISON_REASON_CLASSES } from "@/names/dedup";
import { ApiError } from "@/lib/query-options";
import { dlqQuery, messageHref } from "@/lib/record-queries";
import { useViewState } from "@/lib/url-state";
import { errorTitle } from "../query-state";
import { FIELD_CLASS, LabeledSelect } from "../field";
import { EmptyState, ErrorState, LoadingState, Panel } from "../panel";
import { RedrivePanel } from "./redrive-panel";
import { DataTable } from "../data-table";

const REASON_CHOICES = [{ value: "", label: "any" }, ...POISON_REASON_CLASSES.map((r) => ({ value: r, label: r }))];

/** The URL filter of the DLQ browser; `null` drops the parameter. */
type DlqFilterPatch = { handler?: string | null; reason?: string | null };

/** The handler and reason filter: the handler applies on leaving the field, the reason on choosing it. */
function DlqFilter({ handler, reason, onFilter }: { handler: string; reason: string; onFilter: (patch: DlqFilterPatch) => void }) {
  return (
    <Panel title="Filter" description="Newest first; each request reads a bounded part of the DLQ topic.">
      <form className="flex flex-wrap items-end gap-2" onSubmit={(e) => e.preventDefault()}>
        <label className="flex flex-col text-sm">
          <span>Handler</span>
          <input data-testid="dlq-handler" defaultValue={handler} onBlur={(e) => onFilter({ handler: e.target.value.trim() || null })} className={FIELD_CLASS} />
        </label>
        <LabeledSelect stacked label="Reason" testId="dlq-reason" value={reason} options={REASON_CHOICES} onChange={(r) => onFilter({ reason: r || null })} />
      </form>
    </Panel>
  );
}

/** One DLQ record: when and why it was poisoned, where from, and a link to the message. */
function DlqRow({ e }: { e: DlqEntry }) {
  return (
    <tr data-testid="dlq-row" className="border-t border-slate-100 align-top dark:border-slate-800">
      <td className="whitespace-nowrap text-xs">{e.poisonedAt}</td>
      <td className="font-mono text-xs">{e.uuid ?? "— none"}</td>
      <td title={e.reason}>
        <span className="font-mono text-xs">{e.reasonClass}</span>
        <div className="max-w-xs truncate text-xs text-slate-500">{e.reason}</div>
      </td>
      <td className="font-mono text-xs">{e.handler}</td>
      <td className="font-mono text-xs" title={e.notRedrivable}>
        {e.topicPoisoned}
        {e.redrivable ? "" : " ⚠"}
      </td>
      <td className="font-mono text-xs">{e.subscriber}</td>
      <td>
        <Link href={messageHref(e)} className="text-blue-700 underline dark:text-blue-300">
          open the message
        </Link>
      </td>
    </tr>
  );
}

/** The per-reason counts and the records of one page of the DLQ, with a button to read older ones. */
function DlqPage({ data, handler, onOlder }: { data: DlqResponse; handler: string; onOlder: (cursor: string | undefined) => void }) {
  return (
    <>
      <Panel title={`Per reason in ${data.topic}`} description={`Over the ${data.scanned.records} records this page read${handler ? ` for handler ${handler}` : ""}.`} testId="dlq-reasons">
        <ul className="flex flex-wrap gap-3 text-sm">
          {Object.entries(data.reasons).map(([r, n]) => (
            <li key={r} data-reason={r}>
              <span className="font-mono">{r}</span> <strong>{n}</strong>
            </li>
          ))}
        </ul>
      </Panel>
      <Panel title="Records" testId="dlq-records">
        {data.entries.length === 0 ? (
          <EmptyState height={60}>No DLQ record matches{data.cursor ? " in the part read" : ""}.</EmptyState>
        ) : (
          <DataTable columns={[{ label: "Poisoned" }, { label: "UUID" }, { label: "Reason" }, { label: "Handler" }, { label: "Topic" }, { label: "Subscriber" }, { label: "Record" }]}>
            {data.entries.map((e) => (
              <DlqRow key={`${e.partition}:${e.offset}`} e={e} />
            ))}
          </DataTable>
        )}
        {data.cursor ? (
          <button type="button" onClick={() => onOlder(data.cursor ?? undefined)} className="mt-2 rounded border border-slate-300 px-3 py-1 text-sm dark:border-slate-700">
            Older records
          </button>
        ) : null}
      </Panel>
    </>
  );
}

/** The DLQ browser: filters (`handler=`, `reason=` in the URL), per-reason counts, records newest first, re-drive. */
export function DlqView() {
  const { params, set } = useViewState();
  const handler = params.get("handler") ?? "";
  const reason = params.get("reason") ?? "";
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const q = useQuery(dlqQuery({ handler, reason, cursor, limit: 50 }));
  // A new filter reads from the newest record again.
  const onFilter = (patch: DlqFilterPatch) => (setCursor(undefined), set(patch));
  return (
    <div className="space-y-4">
      <DlqFilter handler={handler} reason={reason} onFilter={onFilter} />
      {q.isPending ? (
        <LoadingState label="Reading the DLQ…" height={160} />
      ) : q.isError ? (
        <ErrorState title={errorTitle(q.error, "DLQ")} detail={q.error instanceof ApiError ? q.error.detail : String(q.error)} height={100} />
      ) : (
        <DlqPage data={q.data} handler={handler} onOlder={setCursor} />
      )}
      <RedrivePanel key={`${handler}|${reason}`} filter={{ ...(handler ? { handler } : {}), ...(reason ? { reason } : {}) }} />
    </div>
  );
}
