"use client";

import { keepPreviousData, queryOptions, useQuery } from "@tanstack/react-query";
import type { HandlerSelfResponse } from "@/lib/api/handlers";
import { formatDurationMs, formatNumber, formatWindowFill } from "@/lib/format";
import { fetchJson } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { Panel } from "../panel";
import { QueryView } from "../query-state";

/** react-query options of `GET /api/handlers/{service}/{handler}`. */
export const handlerSelfQuery = (service: string, handler: string, refetchInterval: number | false) =>
  queryOptions({
    queryKey: ["handler-self", service, handler] as const,
    queryFn: ({ signal }) =>
      fetchJson<HandlerSelfResponse>(`/api/handlers/${encodeURIComponent(service)}/${encodeURIComponent(handler)}`, {
        signal,
      }),
    refetchInterval,
    placeholderData: keepPreviousData,
  });

type Field =
  { status: "ok" } | { status: "unknown"; needs: string; detail: string } | { status: "n/a"; detail: string };

/** One declared field: its value, or "unknown" with why and what to export — never a blank. */
function Row({
  label,
  field,
  children,
  testId,
}: {
  label: string;
  field: Field;
  children?: React.ReactNode;
  testId: string;
}) {
  return (
    <div className="flex flex-wrap gap-x-2 text-sm" data-testid={testId} data-status={field.status}>
      <dt className="w-28 shrink-0 text-slate-500 dark:text-slate-400">{label}</dt>
      <dd>
        {field.status === "ok" ? (
          children
        ) : field.status === "n/a" ? (
          <span className="text-slate-500 dark:text-slate-400">{field.detail}</span>
        ) : (
          <span className="text-amber-800 dark:text-amber-300" title={`needs ${field.needs}`}>
            unknown: {field.detail}
          </span>
        )}
      </dd>
    </div>
  );
}

const said = (source: string) => <span className="text-xs text-slate-500 dark:text-slate-400"> ({source})</span>;

/** What the handler declares (`dedup_handler_info`), what is inferred and from what, and its consumer group by the declared group. */
export function SelfView({ d }: { d: HandlerSelfResponse }) {
  return (
    <div className="grid gap-4 md:grid-cols-2">
      <dl className="space-y-1">
        <Row label="Declared by" field={d.declaration} testId="self-declaration">
          {d.declaration.status === "ok"
            ? d.declaration.source === "info"
              ? `dedup_handler_info (${d.declaration.runtime ?? "runtime not said"}, contract ${d.declaration.contract ?? "?"})`
              : "this dashboard's process (registered)"
            : null}
        </Row>
        <Row label="TTL class" field={d.ttl} testId="self-ttl">
          {d.ttl.status === "ok" ? d.ttl.text : null}
        </Row>
        <Row label="Window" field={d.window} testId="self-window">
          {d.window.status === "ok"
            ? (formatWindowFill(d.window, "in the store") ?? "full: keys as old as their TTL, the projection holds")
            : null}
        </Row>
        <Row label="Lease" field={d.lease} testId="self-lease">
          {d.lease.status === "ok" ? d.lease.text : null}
        </Row>
        <Row label="Attempt limit" field={d.timeout} testId="self-timeout">
          {d.timeout.status === "ok" ? (d.timeout.ms === null ? "none" : formatDurationMs(d.timeout.ms)) : null}
        </Row>
        <Row label="Marking" field={d.marking} testId="self-marking">
          {d.marking.status === "ok" ? d.marking.value : null}
        </Row>
        <Row label="Failure mode" field={d.failureMode} testId="self-failure-mode">
          {d.failureMode.status === "ok" ? `fail-${d.failureMode.value}` : null}
        </Row>
        <Row label="Stack" field={d.stack} testId="self-stack">
          {d.stack.status === "ok" ? <code className="text-xs">{d.stack.names.join(" → ")}</code> : null}
        </Row>
        <Row label="Topic" field={d.topic} testId="self-topic">
          {d.topic.status === "ok" ? (
            <>
              {d.topic.value}
              {said(d.topic.source === "declared" ? "declared" : "from its metrics' topic label")}
            </>
          ) : null}
        </Row>
        <Row label="Key prefix" field={{ status: "ok" }} testId="self-prefix">
          <code className="text-xs">{d.prefix.value}:</code>
          {said(d.prefix.source === "declared" ? "declared" : "convention, not declared")}
        </Row>
        {d.lint.status === "ok" && d.lint.unknown.length ? (
          <ul className="pt-1 text-xs text-amber-800 dark:text-amber-300" aria-label="Not declared">
            {d.lint.unknown.map((u) => (
              <li key={u}>{u}</li>
            ))}
          </ul>
        ) : null}
      </dl>
      <SelfConsumerGroup d={d} />
    </div>
  );
}

/** Its consumer group by the declared group id (or the convention): state, members with their partitions and lag. */
function SelfConsumerGroup({ d }: { d: HandlerSelfResponse }) {
  const g = d.consumerGroup;
  return (
    <div className="text-sm" data-testid="self-consumer-group" data-status={g.status}>
      <p className="mb-1">
        Consumer group <strong>{d.group.id}</strong>
        {said(d.group.source === "declared" ? "declared" : "<service>.<handler>, not declared")}
      </p>
      {g.status === "ok" ? (
        <>
          <p className="text-xs text-slate-500 dark:text-slate-400">
            {g.view.state} · {g.view.members.length} member{g.view.members.length === 1 ? "" : "s"} on {g.topic} · lag{" "}
            {formatNumber(g.view.totalLag)}
          </p>
          <ul className="mt-1 space-y-0.5 text-xs">
            {g.view.members.map((m) => (
              <li key={m.memberId} data-testid="self-member">
                {m.replica}: partitions {m.partitions.join(", ") || "none"} · lag {formatNumber(m.lag)}
              </li>
            ))}
            {g.view.unassigned.length ? <li>held by no member: {g.view.unassigned.join(", ")}</li> : null}
          </ul>
        </>
      ) : (
        <p className="text-xs text-amber-800 dark:text-amber-300">
          {g.status === "unknown" ? `unknown: ${g.detail}` : `unavailable: ${g.detail}`}
        </p>
      )}
    </div>
  );
}

/** The handler as it declares itself, for any consumer of the fleet (any process, any language). */
export function HandlerSelf({ service, handler }: { service: string; handler: string }) {
  const { view } = useViewState();
  const q = useQuery(handlerSelfQuery(service, handler, REFRESH_MS[view.refresh]));
  return (
    <Panel
      title="Declared setup"
      description="What the handler declares in dedup_handler_info (docs/CONTRACT.md), what is inferred and from what, and its consumer group by the declared group."
      testId="handler-self"
    >
      <QueryView query={q} what="Handler declaration" height={120}>
        {(d) => <SelfView d={d} />}
      </QueryView>
    </Panel>
  );
}
