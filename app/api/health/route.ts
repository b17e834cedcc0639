import { cachedHealth } from "@/server/health";
import { answer } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/health` → `{ mode, components: { redis, kafka, prometheus } }`; never hangs (2 s per
 * probe). One answer is shared by all callers for 2 s over long-lived clients (server/health.ts).
 */
export async function GET(req: Request): Promise<Response> {
  return answer(req, await cachedHealth());
}
