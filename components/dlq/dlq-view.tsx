"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { DLQ_STATES, type DlqEntry, type DlqResponse } from "@/lib/api/dlq";
import { POISON_REASON_CLASSES } from "@/names/dedup";
import { ApiError } from "@/lib/query-options";
import { dlqQuery, messageHref } from "@/lib/record-queries";
import { useViewState } from "@/lib/url-state";
import { errorTitle } from "../query-state";
import { FIELD_CLASS, LabeledSelect } from "../field";
import { EmptyState, ErrorState, LoadingState, Panel } from "../panel";
import { RedrivePanel } from "./redrive-panel";
import { DlqOriginCell } from "./dlq-origin";
import { DiscardPanel } from "./discard-panel";
import { MaskedBadge } from "../records/masked-badge";
import { useHydrated } from "../hydrated";
import { DataTable } from "../data-table";
import { formatInstant } from "@/lib/clock-time";

const REASON_CHOICES = [{ value: "", label: "any" }, ...POISON_REASON_CLASSES.map((r) => ({ value: r, label: r }))];
// `expired` records have left the log: a listing read from the log has none to show.
const STATE_CHOICES = [
  ...DLQ_STATES.filter((s) => s !== "expired").map((s) => ({ value: s, label: s === "open" ? "open (waits)" : s })),
  { value: "any", label: "any" },
];

/** The URL filter of the DLQ browser; `null` drops the parameter. */
type DlqFilterPatch = { handler?: string | null; reason?: string | null; state?: string | null };

/** The handler, reason and state filter: the handler applies on leaving the field, the others on choosing. */
function DlqFilter({
  handler,
  reason,
  state,
  onFilter,
}: {
  handler: string;
  reason: string;
  state: string;
  onFilter: (patch: DlqFilterPatch) => void;
}) {
  const hydrated = useHydrated();
  return (
    <Panel title="Filter" description="Newest first; each request reads a bounded part of the DLQ topic.">
      <form className="flex flex-wrap items-end gap-2" onSubmit={(e) => e.preventDefault()}>
        <label className="flex flex-col text-sm">
          <span>Handler</span>
          <input
            data-testid="dlq-handler"
            defaultValue={handler}
            onBlur={(e) => onFilter({ handler: e.target.value.trim() || null })}
            className={FIELD_CLASS}
          />
        </label>
        <LabeledSelect
          stacked
          label="Reason"
          testId="dlq-reason"
          value={reason}
          options={REASON_CHOICES}
          onChange={(r) => onFilter({ reason: r || null })}
        />
        <LabeledSelect
          stacked
          label="State"
          testId="dlq-state"
          value={state}
          options={STATE_CHOICES}
          disabled={!hydrated}
          onChange={(v) => onFilter({ state: v === "open" ? null : v })}
        />
      </form>
    </Panel>
  );
}

/** A record's state in words: who re-drove it where, or who discarded it and why. */
export function stateDetail(e: DlqEntry): string {
  const r = e.resolution;
  if (e.state === "redriven" && r?.to)
    return `re-driven by ${r.who} at ${formatInstant(r.at)} to ${r.to.topic}${r.to.partition !== undefined ? `/${r.to.partition}/${r.to.offset ?? "?"}` : ""} as ${r.to.uuid}`;
  if (e.state === "discarded" && r) return `discarded by ${r.who} at ${formatInstant(r.at)}: ${r.why ?? ""}`;
  return e.state === "open" ? "waits for a re-drive or a discard" : "left the log (retention)";
}

/** One DLQ record: its state, when and why it was poisoned, where from, and a link to the message. */
function DlqRow({ e, ticked, onTick }: { e: DlqEntry; ticked: boolean; onTick: (on: boolean) => void }) {
  const hydrated = useHydrated();
  return (
    <tr
      data-testid="dlq-row"
      data-state={e.state}
      className="border-t border-slate-100 align-top dark:border-slate-800"
    >
      <td>
        {e.state === "open" ? (
          <input
            type="checkbox"
            aria-label={`select ${e.partition}/${e.offset}`}
            data-testid="dlq-tick"
            disabled={!hydrated}
            checked={ticked}
            onChange={(ev) => onTick(ev.target.checked)}
          />
        ) : null}
      </td>
      <td className="text-xs" title={stateDetail(e)}>
        <span className="font-mono">{e.state}</span>
        {e.resolution ? <div className="max-w-xs truncate text-slate-500">{stateDetail(e)}</div> : null}
      </td>
      <td className="whitespace-nowrap text-xs" title={e.poisonedAt ?? undefined} suppressHydrationWarning>
        {formatInstant(e.poisonedAt)}
      </td>
      <td className="font-mono text-xs">
        {e.uuid ?? "— none"}
        <MaskedBadge notes={e.masked} />
      </td>
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
      <DlqOriginCell e={e} />
      <td>
        <Link href={messageHref(e)} className="text-blue-700 underline dark:text-blue-300">
          open the message
        </Link>
      </td>
    </tr>
  );
}

/** The per-reason counts and the records of one page of the DLQ, with a button to read older ones. */
function DlqPage({
  data,
  handler,
  onOlder,
  ticked,
  onTick,
}: {
  data: DlqResponse;
  handler: string;
  onOlder: (cursor: string | undefined) => void;
  ticked: ReadonlySet<string>;
  onTick: (e: DlqEntry, on: boolean) => void;
}) {
  return (
    <>
      <Panel
        title={`Per reason in ${data.topic}`}
        description={`Over the ${data.scanned.records} records this page read${handler ? ` for handler ${handler}` : ""}.`}
        testId="dlq-reasons"
      >
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
          <DataTable
            columns={[
              { label: "" },
              { label: "State" },
              { label: "Poisoned" },
              { label: "UUID" },
              { label: "Reason" },
              { label: "Handler" },
              { label: "Topic" },
              { label: "Subscriber" },
              { label: "Stack" },
              { label: "Record" },
            ]}
          >
            {data.entries.map((e) => (
              <DlqRow
                key={`${e.partition}:${e.offset}`}
                e={e}
                ticked={ticked.has(`${e.partition}:${e.offset}`)}
                onTick={(on) => onTick(e, on)}
              />
            ))}
          </DataTable>
        )}
        {data.cursor ? (
          <button
            type="button"
            onClick={() => onOlder(data.cursor ?? undefined)}
            className="mt-2 rounded border border-slate-300 px-3 py-1 text-sm dark:border-slate-700"
          >
            Older records
          </button>
        ) : null}
      </Panel>
    </>
  );
}

/** The DLQ browser: filters (`topic=`, `handler=`, `reason=`, `state=` in the URL; state open by default), per-reason counts, records newest first, re-drive, discard. */
export function DlqView() {
  const { params, set } = useViewState();
  const topic = params.get("topic") ?? undefined;
  const handler = params.get("handler") ?? "";
  const reason = params.get("reason") ?? "";
  const state = params.get("state") ?? "open";
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [ticked, setTicked] = useState<ReadonlyMap<string, DlqEntry>>(new Map());
  const q = useQuery(dlqQuery({ topic, handler, reason, state, cursor, limit: 50 }));
  // A new filter reads from the newest record again, and forgets what was ticked.
  const onFilter = (patch: DlqFilterPatch) => (setCursor(undefined), setTicked(new Map()), set(patch));
  const onTick = (e: DlqEntry, on: boolean) =>
    setTicked((t) => {
      const next = new Map(t);
      if (on) next.set(`${e.partition}:${e.offset}`, e);
      else next.delete(`${e.partition}:${e.offset}`);
      return next;
    });
  return (
    <div className="space-y-4">
      <DlqFilter handler={handler} reason={reason} state={state} onFilter={onFilter} />
      {q.isPending ? (
        <LoadingState label="Reading the DLQ…" height={160} />
      ) : q.isError ? (
        <ErrorState
          title={errorTitle(q.error, "DLQ")}
          detail={q.error instanceof ApiError ? q.error.detail : String(q.error)}
          height={100}
        />
      ) : (
        <DlqPage data={q.data} handler={handler} onOlder={setCursor} ticked={new Set(ticked.keys())} onTick={onTick} />
      )}
      {q.data ? (
        <DiscardPanel topic={q.data.topic} chosen={[...ticked.values()]} onDone={() => setTicked(new Map())} />
      ) : null}
      <RedrivePanel
        key={`${handler}|${reason}`}
        filter={{ ...(handler ? { handler } : {}), ...(reason ? { reason } : {}) }}
      />
    </div>
  );
}
