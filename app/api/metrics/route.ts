import { appRegistry } from "@/server/registry";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/metrics`: the app's Prometheus exposition (scraped by infra/prometheus/prometheus.yml). */
export async function GET(): Promise<Response> {
  const registry = appRegistry();
  return new Response(await registry.metrics(), {
    headers: { "Content-Type": registry.contentType, "Cache-Control": "no-store" },
  });
}
