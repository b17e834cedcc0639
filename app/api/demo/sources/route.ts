import { demoSourcesPatchSchema } from "@/lib/api/demo";
import { demoSwitchRoute } from "../switch-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/sources` → `DemoSources`: the live demo's traffic and its four duplicate sources; `PUT` with a `DemoSourcesPatch` → `DemoSources`. */
export const { GET, PUT } = demoSwitchRoute(
  "demo.sources",
  demoSourcesPatchSchema,
  (demo) => demo.getSources(),
  (demo, patch) => demo.setSources(patch),
);
