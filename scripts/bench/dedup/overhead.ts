/** The middleware's own overhead per message, in-process with the in-memory repository (no Redis). */
import { Registry } from "prom-client";
import { Deduplicator, MemoryRepository, type Handler, type Marking } from "@/server/dedup";
import { median } from "../../lib/stats";
import { messages, timeIt } from "./measure";
import { MARKINGS } from "./settings";

/**
 * Middleware overhead: CPU time (process.cpuUsage: this process only, so the other tenants of a
 * shared machine do not inflate it the way they inflate wall time) of N messages through the
 * Deduplicator minus N through the bare no-op handler; median of 7 rounds. Wall time is printed
 * alongside.
 */
async function overheadUs(marking: Marking): Promise<{ cpu: number; wall: number }> {
  const n = 100_000;
  const noop: Handler = async () => undefined;
  const cpu: number[] = [];
  const wall: number[] = [];
  const cpuNow = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  for (let round = 0; round < 7; round++) {
    const msgs = messages(n, `ovh${round}`);
    const d = new Deduplicator({
      repository: new MemoryRepository(),
      service: "ovh",
      marking,
      registry: new Registry(),
    });
    const h = d.middleware(noop);
    let c0 = cpuNow();
    const bareWall = await timeIt(async () => {
      for (const m of msgs) await noop(m);
    });
    const bareCpu = cpuNow() - c0;
    c0 = cpuNow();
    const dedupWall = await timeIt(async () => {
      for (const m of msgs) await h(m);
    });
    const dedupCpu = cpuNow() - c0;
    cpu.push((dedupCpu - bareCpu) / n);
    wall.push(((dedupWall - bareWall) / n) * 1e6);
  }
  return { cpu: median(cpu), wall: median(wall) };
}

/** The middleware overhead per marking, printed as in the full run; the lease figure is the target's. */
export async function overheadLine(): Promise<Record<string, number>> {
  const overhead: Record<string, number> = {};
  const lines: string[] = [];
  for (const m of MARKINGS) {
    const o = await overheadUs(m);
    overhead[m] = o.cpu;
    lines.push(`${m} ${o.cpu.toFixed(2)} µs CPU (${o.wall.toFixed(2)} µs wall)`);
  }
  console.log(
    `\nmiddleware overhead per message, in-memory repository, metrics on (median of 7 × 100k):  ${lines.join("   ")}`,
  );
  return overhead;
}

/** The overhead row of bench-results.json (target ≤ 3 µs). */
export const overheadRow = (lease: number) => ({
  name: "dedup.middleware_overhead_us",
  value: +lease.toFixed(3),
  unit: "us",
  reference: 3,
  ratio: +(lease / 3).toFixed(4),
  target: 3,
});
