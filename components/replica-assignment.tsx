"use client";

import { keepPreviousData, queryOptions, useQuery } from "@tanstack/react-query";
import type { ConsumerGroupView, ConsumersResponse } from "@/lib/api/consumers";
import { formatNumber, formatRate, withHiddenWords } from "@/lib/format";
import { fetchJson } from "@/lib/query-options";
import { Panel } from "./panel";
import { QueryView } from "./query-state";
import { DataTable } from "./data-table";

/** react-query options of `GET /api/consumers` (topic, optional group), polled every `refetchInterval` ms. */
export const consumersQuery = (topic: string | undefined, group: string | undefined, refetchInterval: number | false) =>
  queryOptions({
    queryKey: ["consumers", topic, group ?? null] as const,
    queryFn: ({ signal }) => {
      const qs = new URLSearchParams(topic ? { topic } : {});
      if (group) qs.set("group", group);
      return fetchJson<ConsumersResponse>(`/api/consumers?${qs}`, { signal });
    },
    refetchInterval,
    placeholderData: keepPreviousData,
  });

/** The replica id in a clientId `<groupId>/<replica>` (as the server derives `ConsumerMember.replica`). */
const replicaOf = (clientId: string) => clientId.slice(clientId.lastIndexOf("/") + 1);

/** One colour per replica, in member order, so the partition strip and the table match. */
const SWATCHES = [
  "bg-sky-500 text-white",
  "bg-amber-500 text-slate-950",
  "bg-emerald-600 text-white",
  "bg-fuchsia-600 text-white",
  "bg-slate-700 text-white",
  "bg-rose-600 text-white",
];
const swatch = (i: number) => SWATCHES[i % SWATCHES.length]!;

/**
 * The replica table's columns. Its rate is the topic's records committed per second over the
 * header's window — every event type the group reads, the ones its handler skips included — so it
 * is not called "Processed", the handler's 5-min `messages_processed_total` rate on the overview.
 */
export const REPLICA_COLUMNS = [
  {
    label: "Replica",
    className: "py-1",
    title: "<hostname>-<pid> of the consumer process (-r1… for a further replica in it)",
  },
  { label: "Host", className: "py-1" },
  { label: "Partitions", className: "py-1" },
  { label: "Lag", align: "right", className: "py-1" },
  {
    label: "Records committed",
    align: "right",
    className: "py-1",
    title:
      "Records of the topic this replica committed per second, over the window in the header: every event type, those its handler skips included (not the handler's Processed figure)",
  },
] as const;

/**
 * Which replica holds which partitions of a topic, per consumer group: a strip of the topic's
 * partitions coloured by their owner (with each partition's lag), and a table of replicas with
 * their partitions, lag and records committed per second. Self-contained: fetches
 * `GET /api/consumers` itself and polls every `refreshMs`.
 */
export function ReplicaAssignment({
  topic: asked,
  group,
  refreshMs = 5000,
}: {
  topic?: string;
  group?: string;
  refreshMs?: number | false;
}) {
  const q = useQuery(consumersQuery(asked, group, refreshMs));
  // Without a topic asked for, the server answers for its DEMO_TOPIC and names it.
  const topic = asked ?? q.data?.topic ?? "the demo topic";
  return (
    <Panel
      title="Replicas and partitions"
      description={`Consumer group members of ${topic}: who holds which partition, lag, and records of the topic committed per second (every event type; a handler's Processed counts only its own).`}
      testId="replica-assignment"
    >
      <QueryView
        query={q}
        what="Consumer group"
        isEmpty={(d) => d.groups.length === 0}
        empty={`No consumer group is consuming ${topic} right now. Start one with npm run worker.`}
      >
        {(d) => (
          <div className="flex flex-col gap-4">
            {d.groups.map((g) => (
              <GroupView key={g.groupId} g={g} />
            ))}
          </div>
        )}
      </QueryView>
    </Panel>
  );
}

/** The group's id, its Kafka state, and its replicas, lag, protocol and rate window in a line. */
function GroupHeader({ g, stable }: { g: ConsumerGroupView; stable: boolean }) {
  return (
    <div className="mb-2 flex flex-wrap items-baseline gap-x-3 gap-y-1 text-sm">
      <span className="font-medium text-slate-800 dark:text-slate-100">{g.groupId}</span>
      <span
        className={`rounded px-1.5 py-0.5 text-xs ${stable ? "bg-emerald-100 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-200" : "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200"}`}
        title="Kafka group state"
      >
        {g.state}
      </span>
      <span className="text-xs text-slate-500 dark:text-slate-400">
        {g.members.length} replica{g.members.length === 1 ? "" : "s"} · lag {formatNumber(g.totalLag)}
        {g.protocol ? ` · ${g.protocol}` : ""}
        {g.members.length === 0
          ? ""
          : g.rateWindowSeconds !== null
            ? ` · rates over ${g.rateWindowSeconds.toFixed(1)} s`
            : " · rates after the next refresh"}
      </span>
    </div>
  );
}

/** The topic's partitions in a strip, each coloured by its owner (as in the replica table) with its lag. */
function PartitionStrip({ g }: { g: ConsumerGroupView }) {
  const colourOf = new Map(g.members.map((m, i) => [m.memberId, i]));
  return (
    <ol
      className="mb-3 grid gap-1"
      style={{ gridTemplateColumns: `repeat(${Math.max(1, g.partitions.length)}, minmax(0, 1fr))` }}
      aria-label="Partitions by owner"
    >
      {g.partitions.map((p) => {
        const i = p.memberId !== null ? colourOf.get(p.memberId) : undefined;
        return (
          <li
            key={p.partition}
            data-partition={p.partition}
            data-owner={p.clientId ?? ""}
            title={`partition ${p.partition}: ${p.clientId ? replicaOf(p.clientId) : "no owner"}, committed ${p.committedOffset ?? "never"} of ${p.endOffset}, lag ${p.lag}`}
            className={`rounded px-1 py-1 text-center text-xs ${i !== undefined ? swatch(i) : "border border-dashed border-slate-300 text-slate-500 dark:border-slate-700"}`}
          >
            <div className="font-semibold">p{p.partition}</div>
            <div className="tabular-nums opacity-90">lag {formatNumber(p.lag)}</div>
          </li>
        );
      })}
    </ol>
  );
}

/** One consumer group: header, partition overlaps or gaps, the partition strip and the replica table. */
function GroupView({ g }: { g: ConsumerGroupView }) {
  const stable = g.state === "Stable";
  return (
    <div data-testid="consumer-group" data-group={g.groupId}>
      <GroupHeader g={g} stable={stable} />

      {g.overlapping.length > 0 ? (
        <p role="alert" className="mb-2 text-xs text-red-700 dark:text-red-300">
          Partition{g.overlapping.length > 1 ? "s" : ""} {g.overlapping.join(", ")} assigned to more than one replica:
          they would process the same messages.
        </p>
      ) : null}
      {g.unassigned.length > 0 && g.members.length > 0 ? (
        <p className="mb-2 text-xs text-amber-800 dark:text-amber-300">
          Partition{g.unassigned.length > 1 ? "s" : ""} {g.unassigned.join(", ")} held by no replica
          {stable ? "" : " (rebalancing)"}.
        </p>
      ) : null}

      <PartitionStrip g={g} />

      {g.members.length === 0 ? (
        <p className="text-xs text-slate-500 dark:text-slate-400">
          No replica is running in this group; the lag above waits for the next one.
        </p>
      ) : (
        <DataTable columns={REPLICA_COLUMNS} size="xs">
          {g.members.map((m, i) => (
            <tr key={m.memberId} data-testid="replica-row" className="border-t border-slate-100 dark:border-slate-800">
              <td className="py-1">
                <span className={`mr-1.5 inline-block h-2.5 w-2.5 rounded-sm align-middle ${swatch(i)}`} aria-hidden />
                <span title={`clientId ${m.clientId} · member ${m.memberId}`} data-testid="replica-id">
                  {m.replica}
                </span>
              </td>
              <td
                className="py-1 text-slate-600 dark:text-slate-300"
                title={
                  m.host !== withHiddenWords(m.host)
                    ? "Addresses are never sent to the browser (docs/SECURITY.md)"
                    : undefined
                }
              >
                {withHiddenWords(m.host)}
              </td>
              <td className="py-1 tabular-nums">{m.partitions.length ? m.partitions.join(", ") : "none"}</td>
              <td className="py-1 text-right tabular-nums">{formatNumber(m.lag)}</td>
              <td className="py-1 text-right tabular-nums">
                {m.processedPerSecond === null ? "—" : formatRate(m.processedPerSecond, "records")}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}
