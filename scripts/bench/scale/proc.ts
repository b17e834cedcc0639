/** CPU figures from /proc: the machine's busy share, and the CPU the stack's own processes used. */
import { readFileSync } from "node:fs";

/** Busy fraction of all cores between two /proc/stat readings. */
export function cpuTicks(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (line[3] ?? 0) + (line[4] ?? 0);
  const total = line.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Processes of the stack this bench leans on (from scripts/stack.sh's pid files), by name. */
export function servicePids(names: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of names) {
    try {
      const pid = Number(readFileSync(`.stack/pids/${n}.pid`, "utf8").trim());
      if (pid > 0) out.set(n, pid);
    } catch {
      // not started by scripts/stack.sh (e.g. a system redis-server): not measured
    }
  }
  return out;
}

/** CPU time (ms) a process used so far, from /proc/<pid>/stat (utime + stime, 100 ticks/s). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}
