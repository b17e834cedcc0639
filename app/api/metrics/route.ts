import { config } from "@/server/config";
import { markEmbedded } from "@/server/embedded-exposition";
import { appRegistry } from "@/server/registry";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/metrics`: the app's Prometheus exposition (scraped by infra/prometheus/prometheus.yml).
 * In embedded mode every series is marked `app_mode="embedded"`: the demo is no real service, and the
 * shipped Prometheus drops what is so marked.
 */
export async function GET(): Promise<Response> {
  const registry = appRegistry();
  const text = await registry.metrics();
  return new Response(config().mode === "embedded" ? markEmbedded(text) : text, {
    headers: { "Content-Type": registry.contentType, "Cache-Control": "no-store" },
  });
}
