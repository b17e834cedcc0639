/** Step 2 of bench:inspect: latency of the sampled estimate and its error against the exact count. */
import { DEFAULT_KEY_INSPECTOR_OPTIONS, type KeyInspector } from "@/server/observe/keys/inspector";
import type { Inspection } from "@/server/observe/keys/inspector";
import { median } from "../../lib/stats";
import { fmt, type InspectFigures } from "./figures";

/** Five estimates at the seeded size; the worst per-handler error and stated bound over them. */
export async function estimateLatency(inspector: KeyInspector, exact: Inspection, dbsize: number, f: InspectFigures) {
  const estRuns: number[] = [];
  let worstRel = 0;
  let worstBoundRel = 0;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const est = await inspector.run("estimate");
    estRuns.push(performance.now() - t);
    for (const h of est.handlers) {
      const truth = exact.handlers.find((x) => x.prefix === h.prefix)?.keyCount ?? 0;
      if (truth === 0) continue;
      worstRel = Math.max(worstRel, Math.abs(h.keyCount - truth) / truth);
      worstBoundRel = Math.max(worstBoundRel, h.errorBound / truth);
    }
  }
  f.results["inspect.estimate_ms_1m_keys"] = Math.round(median(estRuns));
  f.details.estimate = {
    keys: dbsize,
    runs: estRuns.map(Math.round),
    medianMs: Math.round(median(estRuns)),
    worstHandlerErrorPct: +(worstRel * 100).toFixed(2),
    statedBoundPct999: +(worstBoundRel * 100).toFixed(2),
    draws: DEFAULT_KEY_INSPECTOR_OPTIONS.estimateSamples,
    method: "blocks of ~16 keys from random SCAN cursors, ≤ 1.5 ms script calls, 2 in flight",
  };
  console.log(
    `\n2. estimate at ${fmt(dbsize)} keys: median ${fmt(median(estRuns))} ms over 5 runs (${estRuns.map((x) => fmt(x)).join(", ")})`,
  );
  console.log(
    `   worst per-handler error ${(worstRel * 100).toFixed(2)}% (stated 99.9% bound up to ±${(worstBoundRel * 100).toFixed(2)}%)`,
  );
}
