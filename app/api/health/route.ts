import { health } from "@/server/health";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/health` → `{ mode, components: { redis, kafka, prometheus } }`; never hangs (2 s per probe). */
export async function GET(): Promise<Response> {
  return Response.json(await health(), { headers: { "Cache-Control": "no-store" } });
}
