import { json } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /healthz` → 200 `{ status: "ok" }` while the process serves requests: the liveness probe
 * (the image's HEALTHCHECK). Reads no configuration and no upstream, so only a dead or wedged
 * process fails it; the proxy answers it whatever the `Host` (proxy.ts).
 */
export function GET(): Response {
  return json({ status: "ok" });
}
