/**
 * The built app for the bad-input, access and load cases: started by the e2e harness on 127.0.0.1
 * in real mode against the suite's own redis-server (with a password, and keys seeded inside and
 * outside the configured prefixes) and a recording Prometheus proxy (every query the app sends is
 * kept; forwarded to the shared Prometheus on 9090 when it is up, else answered empty).
 */
import { afterAll, beforeAll } from "vitest";
import { createServer, request, type Server } from "node:http";
import { ulid } from "ulid";
import { startApp, type App } from "@/e2e/harness";
import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PIDS_DIR } from "./procs";
import { closeServer, listenOnFreePort } from "@/server/testing/net";
import { FaultRedis } from "./redis";

/** A fake-or-forwarding Prometheus that records every request. */
export class RecordingPrometheus {
  /** Every request: path and its parameters (query string and form body merged). */
  readonly requests: Array<{ path: string; params: Record<string, string> }> = [];
  private constructor(
    readonly port: number,
    private readonly server: Server,
  ) {}

  static async start(upstream = "http://127.0.0.1:9090"): Promise<RecordingPrometheus> {
    let self!: RecordingPrometheus;
    const up = new URL(upstream);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const u = new URL(req.url ?? "/", "http://x");
        const params = Object.fromEntries(u.searchParams);
        const body = Buffer.concat(chunks).toString();
        if (body && /form-urlencoded/.test(req.headers["content-type"] ?? ""))
          Object.assign(params, Object.fromEntries(new URLSearchParams(body)));
        self.requests.push({ path: u.pathname, params });
        const fwd = request(
          {
            host: up.hostname,
            port: up.port,
            path: req.url,
            method: req.method,
            headers: { ...req.headers, host: up.host },
            timeout: 5000,
          },
          (r) => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
          },
        );
        fwd.on("error", () => {
          // Prometheus is not up: answer like an empty one.
          res.writeHead(200, { "content-type": "application/json" });
          const data = u.pathname.endsWith("/rules")
            ? { groups: [] }
            : { resultType: u.pathname.endsWith("query_range") ? "matrix" : "vector", result: [] };
          res.end(JSON.stringify({ status: "success", data }));
        });
        fwd.end(body);
      });
    });
    self = new RecordingPrometheus(await listenOnFreePort(server), server);
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await closeServer(this.server);
  }
}

/** A distinctive Redis password: the bundle check and the fuzz look for it in every answer. */
export function distinctivePassword(): string {
  return `faultsPw${ulid().toLowerCase()}`;
}

/** Keys seeded outside `*:dedup:*` all carry this marker in their names. */
export const OUTSIDE_MARKER = "zzoutside";

/** Seeds dedup keys in three handler prefixes and keys outside `*:dedup:*` (names carry {@link OUTSIDE_MARKER}). */
export async function seedKeys(redis: FaultRedis, perHandler = 200): Promise<{ inside: string[]; outside: string[] }> {
  const c = redis.client();
  try {
    const inside: string[] = [];
    const p = c.pipeline();
    for (const h of ["on-review-created", "on-user-banned", "on-page-viewed"]) {
      for (let i = 0; i < perHandler; i++) {
        const k = `notification:dedup:${h}:${ulid()}`;
        inside.push(k);
        p.set(k, i % 5 === 0 ? "processing:tok" : "done", "PX", 3_600_000);
      }
    }
    const outside = [
      `secret:session:${OUTSIDE_MARKER}1`,
      `user:42:${OUTSIDE_MARKER}2`,
      `dedup:${OUTSIDE_MARKER}3`,
      `notification:dedupe:${OUTSIDE_MARKER}4`,
      `notification:DEDUP:${OUTSIDE_MARKER}5`,
      `notification:cache:${OUTSIDE_MARKER}6`,
      `notificationXdedupX${OUTSIDE_MARKER}7`,
      `${OUTSIDE_MARKER}8`,
      `notification:dedup${OUTSIDE_MARKER}9`,
    ];
    for (const k of outside) p.set(k, `value-of-${k}`);
    // Keys whose names are glob characters, inside the prefix: listed only when asked for literally.
    p.set("notification:dedup:h[1]:*", "done", "PX", 3_600_000);
    await p.exec();
    return { inside, outside };
  } finally {
    c.disconnect();
  }
}

/** What a case gets: the app, its Redis, its Prometheus proxy, the seeded keys and the password. */
export interface FaultApp {
  app: App;
  redis: FaultRedis;
  prometheus: RecordingPrometheus;
  password: string;
  keys: { inside: string[]; outside: string[] };
  close(): Promise<void>;
}

/** Starts redis (password, seeded), the recording Prometheus and the built app in real mode. */
export async function startFaultApp(extraEnv: Record<string, string> = {}): Promise<FaultApp> {
  const password = distinctivePassword();
  const redis = await FaultRedis.start("app", { password });
  let prometheus: RecordingPrometheus | undefined;
  let app: App | undefined;
  try {
    const keys = await seedKeys(redis);
    prometheus = await RecordingPrometheus.start();
    app = await startApp({
      env: {
        REDIS_URL: redis.url,
        PROMETHEUS_URL: prometheus.url,
        DEMO: "off",
        SERVICE_NAME: "notification",
        ...extraEnv,
      },
    });
    // Recorded like every other process of the suite (the harness stops it by its process group).
    const pidFile = join(PIDS_DIR, `app.${app.pid}`);
    writeFileSync(pidFile, `${app.pid}\n`);
    const a = app;
    const p = prometheus;
    return {
      app: a,
      redis,
      prometheus: p,
      password,
      keys,
      close: async () => {
        await a.stop();
        try {
          unlinkSync(pidFile);
        } catch {
          /* gone */
        }
        await p.close();
        await redis.close();
      },
    };
  } catch (e) {
    await app?.stop();
    await prometheus?.close();
    await redis.close();
    throw e;
  }
}

/**
 * A fault app for the enclosing `describe`: started in `beforeAll` (with `extraEnv`), closed in
 * `afterAll`. Call the returned function inside the tests to reach it.
 */
export function faultAppPerSuite(extraEnv: Record<string, string> = {}): () => FaultApp {
  let fa: FaultApp | undefined;
  beforeAll(async () => {
    fa = await startFaultApp(extraEnv);
  });
  afterAll(async () => fa?.close());
  return () => {
    if (!fa) throw new Error("the fault app did not start (see beforeAll)");
    return fa;
  };
}
