import { consumerRuntime } from "@/server/runtime";
import { answer } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/workshop/scenarios` → `ScenarioList` (lib/api/workshop.ts). */
export async function GET(req: Request): Promise<Response> {
  return answer(req, consumerRuntime().workshop.list());
}
