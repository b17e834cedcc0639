import { demoFaultsPatchSchema } from "@/lib/api/demo";
import { demoSwitchRoute } from "../switch-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/faults` → `DemoFaults`: added latency, error rate, Redis cut-off of the demo's dedup store; `PUT` with a `DemoFaultsPatch` → `DemoFaults` (400 for a Redis cut-off in embedded mode). */
export const { GET, PUT } = demoSwitchRoute(
  "demo.faults",
  demoFaultsPatchSchema,
  (demo) => demo.getFaults(),
  (demo, patch) => demo.setFaults(patch),
);
