/**
 * Helpers of the issue-16 cases in e2e/security.e2e.test.ts: raw HTTP with any header, and a PING
 * latency probe in its own process (the test process is busy with the load it measures).
 */
import { spawn, spawnSync } from "node:child_process";
import { request } from "node:http";

/** One request via node:http (Host, Origin, Sec-Fetch-Site and Content-Length can be set freely). */
export function raw(url: string, o: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: o.path, method: o.method ?? "GET", headers: o.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

const PROBE = `
const net = require("node:net");
const [port, password, ms, every] = process.argv.slice(1);
const s = net.connect(Number(port), "127.0.0.1");
const lat = [];
let t0 = 0n, buf = "", authed = !password;
const ping = () => { t0 = process.hrtime.bigint(); s.write("*1\\r\\n$4\\r\\nPING\\r\\n"); };
s.on("data", (d) => {
  buf += d.toString();
  if (!buf.includes("\\r\\n")) return;
  buf = "";
  if (!authed) { authed = true; return ping(); }
  lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  setTimeout(ping, Number(every));
});
s.on("connect", () => password ? s.write("*2\\r\\n$4\\r\\nAUTH\\r\\n$" + Buffer.byteLength(password) + "\\r\\n" + password + "\\r\\n") : ping());
setTimeout(() => { s.destroy(); process.stdout.write(JSON.stringify(lat)); }, Number(ms));
`;

/**
 * The paired probe: each tick PINGs server A, then (on its answer) server B, so both are measured at
 * the same moments by one process: a stall of the machine lands on both series, a load on A only on A.
 */
const PAIRED_PROBE = `
const net = require("node:net");
const [portA, pwA, portB, pwB, ms, every] = process.argv.slice(1);
const out = { a: [], b: [] };
function conn(port, pw) {
  const s = net.connect(Number(port), "127.0.0.1");
  const c = { s, buf: "", authed: !pw, t0: 0n, onReply: null, ready: null };
  c.ready = new Promise((r) => {
    s.on("connect", () => (pw ? s.write("*2\\r\\n$4\\r\\nAUTH\\r\\n$" + Buffer.byteLength(pw) + "\\r\\n" + pw + "\\r\\n") : r()));
    s.on("data", (d) => {
      c.buf += d.toString();
      if (!c.buf.includes("\\r\\n")) return;
      c.buf = "";
      if (!c.authed) { c.authed = true; return r(); }
      const f = c.onReply; c.onReply = null; if (f) f(Number(process.hrtime.bigint() - c.t0) / 1e6);
    });
  });
  c.ping = () => new Promise((res) => { c.onReply = res; c.t0 = process.hrtime.bigint(); s.write("*1\\r\\n$4\\r\\nPING\\r\\n"); });
  return c;
}
const A = conn(portA, pwA), B = conn(portB, pwB);
let done = false;
setTimeout(() => { done = true; }, Number(ms));
(async () => {
  await Promise.all([A.ready, B.ready]);
  while (!done) {
    out.a.push(await A.ping());
    out.b.push(await B.ping());
    await new Promise((r) => setTimeout(r, Number(every)));
  }
  A.s.destroy(); B.s.destroy();
  process.stdout.write(JSON.stringify(out));
})();
`;

/**
 * PING round trips (ms) to two servers at the same moments ({@link PAIRED_PROBE}), every `everyMs`
 * for `ms`, by one child process (under `chrt -f 1` when `realtime`).
 */
export function pairedPingLatencies(a: { port: number; password: string }, b: { port: number; password: string }, ms: number, everyMs = 5, realtime = false): Promise<{ a: number[]; b: number[] }> {
  return runProbe(PAIRED_PROBE, [String(a.port), a.password, String(b.port), b.password, String(ms), String(everyMs)], realtime, "the paired PING probe");
}

/** Runs a probe script in a child process (under `chrt -f 1` when `realtime`) and parses the JSON it prints. */
function runProbe<T>(script: string, probeArgs: string[], realtime: boolean, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const args = ["-e", script, ...probeArgs];
    const child = realtime ? spawn("chrt", ["-f", "1", process.execPath, ...args], { stdio: ["ignore", "pipe", "inherit"] }) : spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", () => {
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(new Error(`${what} printed ${out.slice(0, 200)}`));
      }
    });
  });
}

/** Whether this machine lets a process run SCHED_FIFO (`chrt -f 1`). */
export function canRunRealtime(): boolean {
  return spawnSync("chrt", ["-f", "1", "true"]).status === 0;
}

/**
 * PING round trips (ms) to 127.0.0.1:`port` every `everyMs` for `ms`, measured by a child process
 * with a connection of its own; under `chrt -f 1` when `realtime` (the probe's own wait for a core
 * is then not counted as Redis latency).
 */
export function pingLatencies(port: number, password: string, ms: number, everyMs = 5, realtime = false): Promise<number[]> {
  return runProbe(PROBE, [String(port), password, String(ms), String(everyMs)], realtime, "the PING probe");
}

/** The `p`-th percentile (0..100) of `xs`. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}
