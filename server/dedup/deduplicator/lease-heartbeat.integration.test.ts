/**
 * The lease heartbeat across two real processes on the real Redis (127.0.0.1:6379): two consumer
 * replicas (server/testing/heartbeat-consumer.ts) deliver the same message, whose handler appends
 * its pid to a Redis list — the side effect counted here. A handler running 5 × leaseMs with the
 * heartbeat keeps the key: the second replica only ever meets its lease, then its `done`. A first
 * replica frozen with SIGSTOP past the lease cannot renew: the second takes the key over and runs
 * the message, and the first one's late success counts one lost lease.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REDIS = "redis://127.0.0.1:6379";
const LEASE_MS = 1_200;
const service = `hb-${randomBytes(3).toString("hex")}`;
const children: ChildProcess[] = [];
let redis: Redis;

interface Event {
  event: string;
  pid: number;
  at: number;
  why?: string;
  leaseLost?: number;
}

/** A replica delivering `uuid` with a handler of `handlerMs`; its events as they come, and a wait for one. */
function replica(uuid: string, handlerMs: number, heartbeat: "on" | "off") {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "server/testing/heartbeat-consumer.ts",
      REDIS,
      service,
      uuid,
      String(LEASE_MS),
      String(handlerMs),
      heartbeat,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  const events: Event[] = [];
  const waiters: Array<() => void> = [];
  let buf = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      events.push(JSON.parse(buf.slice(0, nl)) as Event);
      buf = buf.slice(nl + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  child.on("exit", () => {
    for (const w of waiters.splice(0)) w();
  });
  const waitFor = (event: string, ms = 20_000): Promise<Event> =>
    new Promise((resolve, reject) => {
      const end = Date.now() + ms;
      const check = () => {
        const e = events.find((x) => x.event === event);
        if (e) return resolve(e);
        if (child.exitCode !== null || Date.now() > end)
          return reject(new Error(`no ${event} from replica ${child.pid}: ${JSON.stringify(events)} ${err}`));
        waiters.push(check);
        setTimeout(check, Math.max(0, end - Date.now()) + 1).unref();
      };
      check();
    });
  return { child, pid: child.pid!, events, waitFor, has: (event: string) => events.some((e) => e.event === event) };
}

const effects = async () => (await redis.lrange(`${service}:effects`, 0, -1)).map(Number);

beforeAll(() => {
  redis = new Redis(REDIS);
});

afterAll(async () => {
  for (const c of children) {
    if (c.pid && c.exitCode === null && c.signalCode === null) {
      process.kill(c.pid, "SIGCONT");
      process.kill(c.pid, "SIGKILL");
    }
  }
  const keys = await redis.keys(`${service}:*`);
  if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
});

describe("lease heartbeat, two processes on Redis", () => {
  it("a handler running 5 × leaseMs keeps its key: the second replica never runs the message and ends swallowing it", async () => {
    const a = replica("u-long", 5 * LEASE_MS, "on");
    await a.waitFor("started");
    const b = replica("u-long", 50, "on");
    await b.waitFor("in-progress");
    const exitA = await a.waitFor("exit");
    const exitB = await b.waitFor("exit");
    expect(b.has("started")).toBe(false);
    expect(await effects()).toEqual([a.pid]);
    expect(a.has("aborted")).toBe(false);
    expect(exitA.leaseLost).toBe(0);
    expect(exitB.leaseLost).toBe(0);
    // B kept trying through the whole run past the lease, and only the done mark ended its tries.
    expect(exitB.at).toBeGreaterThanOrEqual((await a.waitFor("finished")).at);
  }, 60_000);

  it("a replica frozen with SIGSTOP past the lease loses the key: the second takes over, and the first's late success counts one lost lease", async () => {
    await redis.del(`${service}:effects`);
    const a = replica("u-frozen", 4 * LEASE_MS, "on");
    await a.waitFor("started");
    process.kill(a.pid, "SIGSTOP");
    const stoppedAt = Date.now();
    const b = replica("u-frozen", 50, "on");
    const exitB = await b.waitFor("exit");
    expect(exitB.at - stoppedAt).toBeGreaterThan(LEASE_MS - 100); // B took the key only once A's lease ran out
    expect(b.has("started")).toBe(true);
    process.kill(a.pid, "SIGCONT");
    const exitA = await a.waitFor("exit");
    expect(a.events.find((e) => e.event === "aborted")?.why).toBe("taken");
    expect(exitA.leaseLost).toBe(1);
    expect(exitB.leaseLost).toBe(0);
    // The documented cost of a stall past the lease: the side effect ran twice, B's first.
    expect(await effects()).toEqual([b.pid, a.pid]);
    expect(await redis.get(`${service}:dedup:h:u-frozen`)).toMatch(/^done/);
  }, 60_000);
});
