"use client";

import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { ApiError } from "@/lib/query-options";
import { EmptyState, ErrorState, LoadingState } from "./panel";

/** Title of an error state for a failed request: the upstream that is down, or what is missing. */
export function errorTitle(e: unknown, what: string): string {
  if (e instanceof ApiError) {
    if (e.code === "unavailable") {
      const d = e.detail.toLowerCase();
      if (d.includes("prometheus")) return "Prometheus unavailable";
      if (d.includes("redis")) return "Redis unavailable";
      return `${what} unavailable`;
    }
    if (e.status === 404 && e.code === "not_found" && e.detail.includes("not available on this server"))
      return `${what}: API not available on this server`;
    if (e.status === 0) return "Dashboard server unreachable";
  }
  return `${what} failed to load`;
}

/**
 * Renders a query's loading, error and empty states, and `children(data)` otherwise.
 * Keeps showing the last data while a refetch fails (with a notice), like Grafana.
 */
export function QueryView<T>({
  query,
  what,
  isEmpty,
  empty,
  height = 120,
  children,
}: {
  query: UseQueryResult<T>;
  what: string;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  height?: number;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <LoadingState label={`Loading ${what.toLowerCase()}…`} height={height} />;
  if (query.isError && query.data === undefined) {
    const e = query.error;
    return (
      <ErrorState
        title={errorTitle(e, what)}
        detail={e instanceof ApiError ? e.detail : String(e)}
        height={height}
        onRetry={() => void query.refetch()}
      />
    );
  }
  const data = query.data as T;
  if (isEmpty?.(data)) return <EmptyState height={height}>{empty ?? "No data"}</EmptyState>;
  return (
    <>
      {query.isError ? (
        <p role="alert" className="mb-1 text-xs text-red-700 dark:text-red-300">
          Last refresh failed ({errorTitle(query.error, what)}); showing earlier data.
        </p>
      ) : null}
      {children(data)}
    </>
  );
}
