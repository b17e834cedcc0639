/**
 * Helpers of the security e2e tests: raw HTTP with any header, and a PING
 * latency probe in its own process (the test process is busy with the load it measures).
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { Kafka, logLevel } from "kafkajs";
import { createTopicsReady } from "@/server/transport/topics";

/** One request via node:http (Host, Origin, Sec-Fetch-Site and Content-Length can be set freely). */
export function raw(
  url: string,
  o: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: o.path, method: o.method ?? "GET", headers: o.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

/**
 * The PING probe: each tick PINGs every server of its list in turn (each on its answer from the one
 * before), then waits `every` ms, so all are measured at the same moments by one process: a stall of
 * the machine lands on every series, a load on one server only on its own. Prints one list of round
 * trips (ms) per server.
 */
const PROBE = `
const net = require("node:net");
const [serversJson, ms, every] = process.argv.slice(1);
function conn({ port, password: pw }) {
  const s = net.connect(Number(port), "127.0.0.1");
  const c = { s, buf: "", authed: !pw, t0: 0n, onReply: null, ready: null, lat: [] };
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
const conns = JSON.parse(serversJson).map(conn);
let done = false;
setTimeout(() => { done = true; }, Number(ms));
(async () => {
  await Promise.all(conns.map((c) => c.ready));
  while (!done) {
    for (const c of conns) c.lat.push(await c.ping());
    await new Promise((r) => setTimeout(r, Number(every)));
  }
  for (const c of conns) c.s.destroy();
  process.stdout.write(JSON.stringify(conns.map((c) => c.lat)));
})();
`;

/** A Redis the probe PINGs. */
export interface PingTarget {
  port: number;
  password: string;
}

/** Runs {@link PROBE} on `servers` in a child process (under `chrt -f 1` when `realtime`): one latency list per server. */
function probe(servers: readonly PingTarget[], ms: number, everyMs: number, realtime: boolean): Promise<number[][]> {
  return new Promise((resolve, reject) => {
    const args = ["-e", PROBE, JSON.stringify(servers), String(ms), String(everyMs)];
    const child = realtime
      ? spawn("chrt", ["-f", "1", process.execPath, ...args], { stdio: ["ignore", "pipe", "inherit"] })
      : spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", () => {
      try {
        resolve(JSON.parse(out) as number[][]);
      } catch {
        reject(new Error(`the PING probe printed ${out.slice(0, 200)}`));
      }
    });
  });
}

/** PING round trips (ms) to `a` and `b` at the same moments, every `everyMs` for `ms` (under `chrt -f 1` when `realtime`). */
export async function pairedPingLatencies(
  a: PingTarget,
  b: PingTarget,
  ms: number,
  everyMs = 5,
  realtime = false,
): Promise<{ a: number[]; b: number[] }> {
  const [la, lb] = await probe([a, b], ms, everyMs, realtime);
  return { a: la!, b: lb! };
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
export async function pingLatencies(
  port: number,
  password: string,
  ms: number,
  everyMs = 5,
  realtime = false,
): Promise<number[]> {
  return (await probe([{ port, password }], ms, everyMs, realtime))[0]!;
}

/** Resident set size (MB) of process `pid`, from /proc. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * `n` concurrent requests, each on its own connection, each sending `body` (with its
 * Content-Length): the status of each, or -1 when the server closed the connection first.
 */
export function concurrentBodies(
  url: string,
  o: { n: number; method: string; path: string; body: Buffer; headers?: Record<string, string> },
): Promise<number[]> {
  const u = new URL(url);
  return Promise.all(
    Array.from(
      { length: o.n },
      () =>
        new Promise<number>((resolve) => {
          const req = request(
            {
              host: u.hostname,
              port: u.port,
              path: o.path,
              method: o.method,
              agent: false,
              headers: { host: u.host, "content-length": String(o.body.length), ...o.headers },
            },
            (res) => {
              res.resume();
              res.on("end", () => resolve(res.statusCode ?? 0));
            },
          );
          req.on("error", () => resolve(-1));
          req.end(o.body);
        }),
    ),
  );
}

/**
 * Creates `topic` (2 partitions) on the stack's Kafka and runs one consumer per clientId
 * (`<groupId>/<replica>`, as this app's consumers name themselves) in its group; `close` stops them
 * and deletes the topic and the groups.
 */
export async function consumerGroups(
  topic: string,
  clientIds: readonly string[],
  brokers = ["127.0.0.1:9092"],
): Promise<{ close: () => Promise<void> }> {
  const admin = new Kafka({ clientId: "sec-probe-admin", brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await createTopicsReady(admin, [{ name: topic, partitions: 2 }]);
  const consumers = await Promise.all(
    clientIds.map(async (clientId) => {
      const groupId = clientId.slice(0, clientId.lastIndexOf("/"));
      const c = new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING }).consumer({ groupId });
      await c.connect();
      await c.subscribe({ topics: [topic], fromBeginning: true });
      await c.run({ eachMessage: async () => undefined });
      return { c, groupId };
    }),
  );
  return {
    close: async () => {
      await Promise.all(consumers.map(({ c }) => c.disconnect().catch(() => undefined)));
      await admin.deleteGroups(consumers.map((x) => x.groupId)).catch(() => undefined);
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
