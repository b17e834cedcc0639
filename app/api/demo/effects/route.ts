import { config } from "@/server/config";
import { demoEffects } from "@/server/demo/demo-effects";
import { answer } from "@/server/http";
import { appRegistry } from "@/server/registry";
import { consumerRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/effects` → `DemoEffects`: the live demo consumer's totals in this process now (the page subtracts its marker). */
export async function GET(req: Request): Promise<Response> {
  const demo = consumerRuntime().demo;
  return answer(req, {
    mode: demo.mode,
    running: demo.isRunning,
    ...(await demoEffects(appRegistry(), config().SERVICE_NAME)),
  });
}
