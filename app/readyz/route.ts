import { json } from "@/server/http";
import { readiness } from "@/server/readiness";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /readyz` → 200 `{ status: "ready", role, reasons: [] }`, or 503 `{ status: "not-ready",
 * role, reasons }` naming each cause: the configuration invalid, a configured upstream (Redis,
 * Kafka, Prometheus, PostgreSQL) unreachable (server/readiness.ts). Reasons carry the failure's kind, never an
 * address or a credential (server/redact.ts).
 */
export async function GET(): Promise<Response> {
  const r = await readiness();
  return json(r, r.status === "ready" ? 200 : 503);
}
