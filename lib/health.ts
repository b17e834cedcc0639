/** `GET /api/health`'s body, shared by the server and the browser. */
export interface ComponentHealth {
  status: "up" | "down" | "not-configured";
  /** Round-trip time of the probe, or null when it did not answer. */
  latencyMs: number | null;
  detail: string;
}

/** `GET /api/health`'s body. */
export interface Health {
  mode: "embedded" | "real";
  components: { redis: ComponentHealth; kafka: ComponentHealth; prometheus: ComponentHealth };
}

/** react-query options for the health probe. */
export const healthQuery = (refetchIntervalMs: number | false = 10_000) => ({
  queryKey: ["health"] as const,
  queryFn: async (): Promise<Health> => {
    const res = await fetch("/api/health", { cache: "no-store" });
    if (!res.ok) throw new Error(`/api/health answered ${res.status}`);
    return (await res.json()) as Health;
  },
  refetchInterval: refetchIntervalMs,
});
