/**
 * react-query option factories and calls of the record, DLQ, key-action and audit endpoints (the
 * rest are in lib/query-options.ts, whose {@link fetchJson}, {@link send} and `ApiError` these share).
 */
import { queryOptions } from "@tanstack/react-query";
import type { AuditResponse } from "@/lib/api/audit";
import type { ForgetResponse, TtlResponse } from "@/lib/api/key-actions";
import type { DlqResponse, RedriveResponse } from "@/lib/api/dlq";
import type { RedriveMode } from "@/names/dlq";
import type { RecordsResponse } from "@/lib/api/records";
import { fetchJson, send } from "./query-options";

/** `GET /api/records?topic=&partition=&offset=` or `?topic=&uuid=` (`at` names one or the other). */
export const recordsQuery = (at: { topic: string; partition?: number; offset?: string; uuid?: string }) => {
  const q = new URLSearchParams({ topic: at.topic });
  if (at.uuid) q.set("uuid", at.uuid);
  else {
    q.set("partition", String(at.partition ?? ""));
    q.set("offset", at.offset ?? "");
  }
  return queryOptions({
    queryKey: ["records", q.toString()] as const,
    queryFn: ({ signal }) => fetchJson<RecordsResponse>(`/api/records?${q}`, { signal }),
    enabled: at.topic.length > 0 && (!!at.uuid || (at.partition !== undefined && !!at.offset)),
    staleTime: Infinity,
  });
};

/** The message page's URL of a record. */
export function messageHref(r: { topic: string; partition: number; offset: string }): string {
  return `/records?${new URLSearchParams({ topic: r.topic, partition: String(r.partition), offset: r.offset })}`;
}

/** The message page's URL of a UUID search. */
export function uuidSearchHref(topic: string, uuid: string): string {
  return `/records?${new URLSearchParams({ topic, uuid })}`;
}

/** `GET /api/dlq?topic=&handler=&reason=&cursor=&limit=` */
export const dlqQuery = (f: {
  topic?: string;
  handler?: string;
  reason?: string;
  state?: string;
  cursor?: string;
  limit?: number;
}) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v !== undefined && v !== "") q.set(k, String(v));
  return queryOptions({
    queryKey: ["dlq", q.toString()] as const,
    queryFn: ({ signal }) => fetchJson<DlqResponse>(`/api/dlq?${q}`, { signal }),
  });
};

/** `POST /api/dlq/redrive` */
export const redrive = (
  body: {
    topic?: string;
    uuids?: string[];
    filter?: { handler?: string; reason?: string };
    mode?: RedriveMode;
    previewId?: string;
    dryRun: boolean;
  },
  token: string | null,
) => send<RedriveResponse>("/api/dlq/redrive", "POST", token, body);

/** `POST /api/keys/forget` */
export const forgetKeys = (body: Record<string, unknown>, token: string | null) =>
  send<ForgetResponse>("/api/keys/forget", "POST", token, body);

/** `POST /api/keys/ttl` */
export const setKeysTtl = (body: Record<string, unknown>, token: string | null) =>
  send<TtlResponse>("/api/keys/ttl", "POST", token, body);

/** `GET /api/audit?action=&limit=` */
export const auditQuery = (action: string | null) =>
  queryOptions({
    queryKey: ["audit", action] as const,
    queryFn: ({ signal }) =>
      fetchJson<AuditResponse>(`/api/audit?limit=200${action ? `&action=${encodeURIComponent(action)}` : ""}`, {
        signal,
      }),
    refetchInterval: 10_000,
  });
