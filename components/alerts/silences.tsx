"use client";

import { useQuery } from "@tanstack/react-query";
import { matchersText, type AlertmanagerInstance, type Silence } from "@/lib/api/silences";
import { silencesQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { Panel, UnavailableState } from "../panel";
import { QueryView } from "../query-state";
import { MutationError, TokenField } from "../workshop/token-field";
import { useSilenceWrites } from "./silence-writes";
import { formatInstant } from "@/lib/clock-time";

function clock(iso: string | null): string {
  return formatInstant(iso);
}

/** Expires silence `id` (as `amtool silence expire` does). */
export function ExpireButton({ id }: { id: string }) {
  const { expire, tok } = useSilenceWrites();
  return (
    <span>
      <button
        type="button"
        data-testid="silence-expire"
        data-silence={id}
        disabled={expire.isPending}
        onClick={() => expire.mutate(id)}
        className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 disabled:opacity-50 dark:border-slate-700 dark:hover:bg-slate-800"
      >
        Expire
      </button>
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <MutationError error={expire.error} />
    </span>
  );
}

const AM_TONE: Record<AlertmanagerInstance["state"], string> = {
  active: "bg-red-50 text-red-900 ring-red-200 dark:bg-red-950/40 dark:text-red-200 dark:ring-red-900",
  suppressed: "bg-slate-100 text-slate-800 ring-slate-300 dark:bg-slate-800 dark:text-slate-200 dark:ring-slate-700",
  unprocessed: "bg-amber-50 text-amber-900 ring-amber-200 dark:bg-amber-950/40 dark:text-amber-200 dark:ring-amber-900",
  "not-received": "text-slate-500 ring-slate-200 dark:text-slate-400 dark:ring-slate-700",
};

/** Alertmanager's state of one alert instance: active / suppressed (by which silence or inhibition, until when) / not received. */
export function AlertmanagerState({ am }: { am: AlertmanagerInstance | undefined }) {
  if (!am) return <span className="text-xs text-slate-500 dark:text-slate-400">—</span>;
  return (
    <div className="space-y-0.5 text-xs" data-testid="am-state" data-state={am.state}>
      <span className={`inline-block rounded px-2 py-0.5 font-medium ring-1 ${AM_TONE[am.state]}`}>
        {am.state === "not-received" ? "not received" : am.state}
      </span>
      {am.suppressedBy.map((s) => (
        <div key={`${s.kind}-${s.id}`} data-testid="am-suppressor" data-kind={s.kind} data-id={s.id}>
          {s.kind === "silence" ? (
            <>
              {am.state === "not-received" ? "will be silenced" : "silenced"} by{" "}
              <code title={s.id}>{s.id.slice(0, 8)}</code> until{" "}
              <span title={s.until ?? undefined}>{clock(s.until)}</span>
              {s.text ? <span className="text-slate-500 dark:text-slate-400"> · {s.text}</span> : null}{" "}
              <ExpireButton id={s.id} />
            </>
          ) : (
            <>
              inhibited by <code>{s.text}</code> while it fires
            </>
          )}
        </div>
      ))}
    </div>
  );
}

/** Alertmanager's silences that are not expired: what `amtool silence query` lists, with Expire. */
export function SilencesPanel() {
  const { view } = useViewState();
  const q = useQuery(silencesQuery(REFRESH_MS[view.refresh]));
  return (
    <Panel
      title="Silences"
      description="Alertmanager's silences in force or scheduled (the same list as amtool silence query)."
      testId="silences"
    >
      <QueryView query={q} what="Silences" height={60}>
        {(d) =>
          d.alertmanager.status !== "ok" ? (
            <UnavailableState detail={d.alertmanager.detail} fallback="Alertmanager" />
          ) : (
            <SilenceTable silences={d.alertmanager.silences.filter((s) => s.state !== "expired")} />
          )
        }
      </QueryView>
    </Panel>
  );
}

function SilenceTable({ silences }: { silences: readonly Silence[] }) {
  if (silences.length === 0) return <p className="text-sm text-slate-500 dark:text-slate-400">No silence in force.</p>;
  return (
    <table className="w-full text-sm">
      <caption className="sr-only">Silences</caption>
      <thead className="text-left text-xs text-slate-500 dark:text-slate-400">
        <tr>
          <th scope="col" className="font-normal">
            ID
          </th>
          <th scope="col" className="font-normal">
            Matchers
          </th>
          <th scope="col" className="font-normal">
            Ends at
          </th>
          <th scope="col" className="font-normal">
            Created by
          </th>
          <th scope="col" className="font-normal">
            Comment
          </th>
          <th scope="col" className="font-normal" />
        </tr>
      </thead>
      <tbody>
        {silences.map((s) => (
          <tr
            key={s.id}
            data-testid="silence-row"
            data-silence={s.id}
            data-state={s.state}
            className="border-t border-slate-100 align-top dark:border-slate-800"
          >
            <td className="py-1 font-mono text-xs">{s.id}</td>
            <td className="font-mono text-xs">{matchersText(s.matchers)}</td>
            <td className="text-xs" title={s.endsAt}>
              {clock(s.endsAt)}
              {s.state === "pending" ? ` (starts ${clock(s.startsAt)})` : ""}
            </td>
            <td className="text-xs">{s.createdBy}</td>
            <td className="text-xs">{s.comment}</td>
            <td>
              <ExpireButton id={s.id} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
