import { consumerRuntime } from "@/server/consumer/runtime";
import { json } from "@/server/consumer/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/workshop/scenarios` → `ScenarioList` (lib/workshop-types.ts). */
export async function GET(): Promise<Response> {
  return json(consumerRuntime().workshop.list());
}
