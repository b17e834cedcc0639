/**
 * An app on servers of its own for e2e tests: {@link startOwnStack}.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@/server/testing/net";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { ROOT, startApp, type App } from "./harness";
import { startedForTests } from "./hooks";

/**
 * One service's app against processes of its own: an own `redis-server` without persistence (its
 * REDIS_URL), an own Prometheus scraping the app's `/api/metrics` every second and evaluating the
 * project's rules as often (its PROMETHEUS_URL), and the app (no KAFKA_BROKERS: the embedded
 * broker). `redis` and `prom` are the running ones: a test stops either and starts it again on
 * the same port (Redis empty, Prometheus with its history).
 */
export interface OwnStack {
  readonly app: App;
  readonly redis: OwnRedis;
  readonly prom: OwnPrometheus;
  /** Starts redis-server again, empty, on the stopped one's port. */
  startRedisAgain(): Promise<void>;
  /** Starts Prometheus again on the stopped one's port and storage: its series and rule states are kept. */
  startPrometheusAgain(): Promise<void>;
  /** Stops the app, Prometheus and Redis by pid (removing every key and sample the test wrote). */
  stop(): Promise<void>;
}

/** An {@link OwnStack} ({@link startOwnStack} with `opts`) for the tests of the calling file or `describe`. */
export function ownStackForTests(opts: Parameters<typeof startOwnStack>[0]): OwnStack {
  return startedForTests(
    () => startOwnStack(opts),
    (stack) => stack.stop(),
  );
}

/** Starts an {@link OwnStack}: `seed` writes into Redis before the app starts; `env` is the app's beyond SERVICE_NAME, DEDUP_PREFIXES and the two URLs. */
export async function startOwnStack(opts: {
  service: string;
  env?: Record<string, string>;
  seed?: (redisUrl: string) => Promise<void>;
}): Promise<OwnStack> {
  const port = await freePort();
  const storage = mkdtempSync(join(tmpdir(), "own-stack-prom-"));
  const promOpts = {
    targets: [`127.0.0.1:${port}`],
    ruleFiles: [join(ROOT, "infra/prometheus/rules/dedup.yml")],
    intervalSec: 1,
    metricsPath: "/api/metrics",
    storage,
  };
  // What runs now: stop() (or a failed start) stops these.
  const up: { redis?: OwnRedis; prom?: OwnPrometheus; app?: App } = {};
  const stop = async () => {
    await up.app?.stop();
    await up.prom?.stop();
    rmSync(storage, { recursive: true, force: true });
    await up.redis?.stop();
  };
  try {
    up.redis = await startOwnRedis();
    await opts.seed?.(up.redis.url);
    up.prom = await startOwnPrometheus(promOpts);
    up.app = await startApp({
      port,
      env: {
        ...opts.env,
        REDIS_URL: up.redis.url,
        PROMETHEUS_URL: up.prom.url,
        DEDUP_PREFIXES: `${opts.service}:dedup:*`,
        SERVICE_NAME: opts.service,
      },
    });
  } catch (e) {
    await stop();
    throw e;
  }
  const redisPort = up.redis.port;
  const promPort = Number(new URL(up.prom.url).port);
  return {
    get app() {
      return up.app!;
    },
    get redis() {
      return up.redis!;
    },
    get prom() {
      return up.prom!;
    },
    startRedisAgain: async () => void (up.redis = await startOwnRedis({ port: redisPort })),
    startPrometheusAgain: async () => void (up.prom = await startOwnPrometheus({ ...promOpts, port: promPort })),
    stop,
  };
}
