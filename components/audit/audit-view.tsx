"use client";

import { useQuery } from "@tanstack/react-query";
import { AUDIT_ACTIONS, type AuditEntry } from "@/lib/api/audit";
import { ApiError } from "@/lib/query-options";
import { auditQuery } from "@/lib/record-queries";
import { useViewState } from "@/lib/url-state";
import { errorTitle } from "../query-state";
import { EmptyState, ErrorState, LoadingState, Panel } from "../panel";
import { DataTable } from "../data-table";
import { LabeledSelect } from "../field";
import { formatInstant } from "@/lib/clock-time";

const ACTION_CHOICES = [{ value: "", label: "every action" }, ...AUDIT_ACTIONS.map((a) => ({ value: a, label: a }))];

/** The audit trail, newest first: when, who, what, the filter, matched / changed, the result. */
export function AuditView() {
  const { params, set } = useViewState();
  const action = params.get("action");
  const q = useQuery(auditQuery(action));
  return (
    <Panel
      title="Every action, newest first"
      description={
        q.data
          ? q.data.store === "postgres"
            ? "Kept in PostgreSQL (DATABASE_URL): survives restarts."
            : "Kept in this process's memory (DATABASE_URL is not set): a restart loses it."
          : undefined
      }
      actions={
        <LabeledSelect
          label="Action"
          testId="audit-action"
          value={action ?? ""}
          options={ACTION_CHOICES}
          onChange={(a) => set({ action: a || null })}
        />
      }
      testId="audit"
    >
      {q.isPending ? (
        <LoadingState label="Loading the trail…" height={120} />
      ) : q.isError ? (
        <ErrorState
          title={errorTitle(q.error, "Audit")}
          detail={q.error instanceof ApiError ? q.error.detail : String(q.error)}
          height={80}
        />
      ) : q.data.entries.length === 0 ? (
        <EmptyState height={60}>No action recorded yet.</EmptyState>
      ) : (
        <DataTable
          columns={[
            { label: "When" },
            { label: "Who" },
            { label: "Action" },
            { label: "Filter" },
            { label: "Touched" },
            { label: "Matched", align: "right" },
            { label: "Changed", align: "right" },
            { label: "Result", className: "pl-4" },
          ]}
        >
          {q.data.entries.map((e) => (
            <AuditRow key={e.id} e={e} />
          ))}
        </DataTable>
      )}
    </Panel>
  );
}

/** One entry: when, who (with a user's roles), the action, its filter, what it touched, matched / changed, the result. */
function AuditRow({ e }: { e: AuditEntry }) {
  return (
    <tr data-testid="audit-row" className="border-t border-slate-100 align-top dark:border-slate-800">
      <td className="whitespace-nowrap text-xs" title={e.at} suppressHydrationWarning>
        {formatInstant(e.at)}
      </td>
      <td title={principalText(e.principal)} data-testid="audit-who">
        {e.who}
        {/* A user's roles (proxy/oidc); the token or a local request is the whole app's admin by rule: its title says so. */}
        {e.principal.roles && (e.principal.source === "proxy" || e.principal.source === "oidc") ? (
          <span className="block text-xs text-slate-500 dark:text-slate-400">{e.principal.roles}</span>
        ) : null}
      </td>
      <td className="font-mono text-xs">
        {e.action}
        {e.dryRun ? " (dry run)" : ""}
      </td>
      <td className="max-w-md truncate font-mono text-xs" title={JSON.stringify(e.filter)}>
        {JSON.stringify(e.filter)}
      </td>
      <td className="max-w-md font-mono text-xs" data-testid="audit-touched" title={touchedText(e.touched)}>
        {Object.keys(e.touched).length === 0 ? (
          "—"
        ) : (
          <span className="line-clamp-3 break-all">{touchedText(e.touched)}</span>
        )}
      </td>
      <td className="text-right tabular-nums">{e.matched ?? "—"}</td>
      <td className="text-right tabular-nums">{e.changed ?? "—"}</td>
      <td className={`pl-4 ${e.result === "ok" ? "" : "text-red-700 dark:text-red-300"}`}>{e.result}</td>
    </tr>
  );
}

/** The entry's principal beyond the name, for the Who cell's title: `proxy · alice@example.com · 198.51.100.7`. */
function principalText(p: AuditEntry["principal"]): string {
  return [p.source, p.email, p.address].filter(Boolean).join(" · ");
}

/** What an entry touched, kind by kind: `uuids: a, b (+98 more)`. */
function touchedText(t: AuditEntry["touched"]): string {
  return Object.entries(t)
    .map(
      ([kind, { items, total }]) =>
        `${kind}: ${items.join(", ")}${total > items.length ? ` (+${total - items.length} more)` : ""}`,
    )
    .join("; ");
}
