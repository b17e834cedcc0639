"use client";

import { useQuery } from "@tanstack/react-query";
import { healthQuery, type ComponentHealth } from "@/lib/health";

const tone: Record<ComponentHealth["status"], string> = {
  up: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/40 dark:text-emerald-200",
  down: "bg-red-100 text-red-900 dark:bg-red-900/40 dark:text-red-200",
  "not-configured": "bg-slate-100 text-slate-700 dark:bg-slate-800 dark:text-slate-300",
};

/** Status of Redis, Kafka and Prometheus and the mode, from `/api/health`. */
export function HealthStrip({ refetchIntervalMs = 10_000 }: { refetchIntervalMs?: number | false }) {
  const q = useQuery(healthQuery(refetchIntervalMs));
  if (q.isPending)
    return (
      <p role="status" className="text-sm text-slate-500">
        Checking Redis, Kafka and Prometheus…
      </p>
    );
  if (q.isError)
    return (
      <p role="alert" className="text-sm text-red-700">
        Health unavailable: {q.error.message}
      </p>
    );
  const h = q.data;
  return (
    <section aria-label="Component health" className="flex flex-wrap items-center gap-2 text-sm">
      <span data-testid="mode" className="rounded px-2 py-1 font-medium ring-1 ring-slate-300 dark:ring-slate-700">
        {h.mode === "embedded" ? "Embedded mode: one process with an in-memory store, not a deployment" : "Real mode"}
      </span>
      {(Object.entries(h.components) as [string, ComponentHealth][]).map(([name, c]) => (
        <span
          key={name}
          data-testid={`health-${name}`}
          title={c.detail}
          className={`rounded px-2 py-1 ${tone[c.status]}`}
        >
          {name}: {c.status}
          {c.latencyMs !== null ? ` · ${c.latencyMs} ms` : ""}
        </span>
      ))}
    </section>
  );
}
