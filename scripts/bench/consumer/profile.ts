/**
 * V8 CPU profiles of a consume for `bench:consumer --profile`: taking one around a function, and
 * splitting a `.cpuprofile`'s self time by area (kafkajs, ioredis, our folders, GC …) and by frame.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time of a `.cpuprofile`: fraction per area, and the top frames. */
export interface ProfileSplit {
  sampledSeconds: number;
  areas: Record<string, number>;
  top: Array<{ frame: string; fraction: number }>;
}

/** Where a frame's code lives, for the per-area split. */
function areaOf(url: string, fn: string): string {
  if (fn === "(garbage collector)") return "GC";
  if (fn === "(idle)" || fn === "(program)") return fn;
  if (url.includes("node_modules/kafkajs")) return "kafkajs";
  if (
    url.includes("node_modules/ioredis") ||
    url.includes("node_modules/redis-parser") ||
    url.includes("node_modules/denque")
  )
    return "ioredis";
  if (url.includes("node_modules/prom-client")) return "prom-client";
  if (url.includes("/server/dedup/")) return "server/dedup";
  for (const area of ["transport", "notification", "demo", "workshop"])
    if (url.includes(`/server/${area}/`)) return `server/${area}`;
  if (url.includes("node_modules/")) return "other node_modules";
  if (url.startsWith("node:") || url === "") return "node internals";
  return "other";
}

/** Reads a `.cpuprofile` and splits its self time by area and by frame. */
export function analyzeProfile(path: string, top: number): ProfileSplit {
  const p = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url
      .replace(/^file:\/\//, "")
      .replace(/^.*\/(node_modules\/)/, "$1")
      .replace(/^.*\/work\/main\//, "");
    const k = `${functionName || "(anonymous)"}  ${file}:${lineNumber + 1}`;
    frames.set(k, (frames.get(k) ?? 0) + us);
    const a = areaOf(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
  }
  return {
    sampledSeconds: +(total / 1e6).toFixed(3),
    areas: Object.fromEntries([...areas].sort((x, y) => y[1] - x[1]).map(([a, us]) => [a, +(us / total).toFixed(4)])),
    top: [...frames]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([frame, us]) => ({ frame, fraction: +(us / total).toFixed(4) })),
  };
}

/** The top self-time frames and the self time per area of a `.cpuprofile`, as text. */
export function summarizeProfile(path: string, top: number): string {
  const a = analyzeProfile(path, top);
  const pct = (f: number) => `${(100 * f).toFixed(1).padStart(5)}%`;
  const lines = [`profile ${path}: ${a.sampledSeconds.toFixed(2)} s sampled`, "self time per area:"];
  for (const [area, f] of Object.entries(a.areas)) lines.push(`  ${pct(f)}  ${area}`);
  lines.push(`top ${top} frames by self time:`);
  for (const t of a.top) lines.push(`  ${pct(t.fraction)}  ${t.frame}`);
  return lines.join("\n");
}

/** Profiles `fn` with V8's CPU profiler (what `node --cpu-prof` uses), written to `path`; no profile when `path` is empty. */
export async function profiled<T>(path: string, fn: () => Promise<T>): Promise<T> {
  if (!path) return fn();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 500 });
  await session.post("Profiler.start");
  try {
    return await fn();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(path, JSON.stringify(profile));
    session.disconnect();
    console.log(`  cpu profile written to ${path} (summary: npm run bench:consumer -- --profile-top ${path})`);
  }
}
