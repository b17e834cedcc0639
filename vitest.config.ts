import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { longestFirst } from "./test/sequencer";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * Integration files that run alone, after the others: each asserts a latency or a share of the
 * machine that other tests' load would break, reads a server-wide counter, or moves the shared Redis
 * Cluster's slots.
 */
const INTEGRATION_ALONE = [
  // A bound on how fast the "now" state follows a fault (seconds, at a 1 s scrape).
  "app/api/overview/now-window.integration.test.ts",
  // The exact count's per-call bound and its share of Redis time.
  "app/api/keys/seeded-keyspace.integration.test.ts",
  // The demo's switches take effect within a bound.
  "server/demo/demo-toggles.integration.test.ts",
  // INFO commandstats: the server-wide time per command.
  "server/observe/watchers/redis-command-time.integration.test.ts",
  // An answer within 2 s while Prometheus is stopped.
  "server/observe/metrics/prometheus.integration.test.ts",
  // A check that does not wait for the store (800 ms bound).
  "server/dedup/repository/redis-repository.integration.test.ts",
  // One socket read per estimate call: a CPU-starved redis-server reads two queued calls at once.
  "server/observe/keys/inspector-estimate.integration.test.ts",
];

/**
 * The Redis Cluster on 7000-7002 is one for all: resharding moves its slots under the others. These
 * files run one at a time in project `integration-cluster`; nothing else uses the Cluster, so `npm
 * test` runs them beside `integration-alone` (which touches only the standalone Redis and Kafka).
 */
const INTEGRATION_CLUSTER = ["**/*.cluster.integration.test.ts"];

/**
 * The integration files that take longest (20-60 s each in a fresh-clone CI run), started first so
 * the short ones fill the workers at the end (test/sequencer.ts).
 */
const LONGEST_FIRST = [
  "server/workshop/volume.integration.test.ts",
  "server/observe/keys/samples.integration.test.ts",
  "app/api/consumers/consumer-group.integration.test.ts",
  "server/workshop/scenarios.integration.test.ts",
  "server/transport/dlq-once.integration.test.ts",
  "server/demo/demo.integration.test.ts",
  // Three consumers (a JVM among them) each driven through every phase of the conformance kit: ~80 s.
  "scripts/conformance.integration.test.ts",
];

/**
 * Last in the `integration-alone` queue: bounds of a few seconds on how fast the page's "now" follows
 * a fault, which a SIGKILL fault case or the Cluster's resharding beside it stretched (test-all.sh runs
 * both beside the queue's start).
 */
const LAST = ["app/api/overview/now-window.integration.test.ts"];

/** Side by side: the unit files and the integration files that do not run alone (one vitest group, so one worker limit). */
const SIDE_BY_SIDE_WORKERS = 3;

/** An integration project whose files run one at a time. */
const oneAtATime = (name: string, include: string[]) => ({
  resolve: { alias: { "@": root } },
  test: {
    name,
    include,
    exclude: ["node_modules/**", ".stack/**"],
    environment: "node" as const,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});

/**
 * Five projects: `unit` (fakes, fake timers, no network); the `*.integration.test.ts` files (real
 * Redis/Kafka/Prometheus/PostgreSQL brought up by `npm run stack:up`) as `integration`, which run
 * side by side with the unit files, `integration-alone` (INTEGRATION_ALONE above) and
 * `integration-cluster` (INTEGRATION_CLUSTER), each one file at a time after them; and `e2e`
 * (Playwright with Debian's Chromium against the built app), one file at a time.
 * `--project 'integration*'` selects the three integration projects.
 *
 * Side by side is safe for the integration files because each isolates itself (its own key prefix,
 * topic, consumer group, service name, or its own redis-server / Prometheus on a free port), and most
 * of their time is waiting (a consumer group's join, a scrape interval, a session timeout), not CPU.
 */
export default defineConfig({
  resolve: { alias: { "@": root } },
  test: {
    sequence: { sequencer: longestFirst(LONGEST_FIRST, LAST) },
    projects: [
      {
        resolve: { alias: { "@": root } },
        test: {
          name: "unit",
          include: ["{names,server,lib,scripts,app,infra}/**/*.test.ts", "components/**/*.test.tsx"],
          exclude: ["**/*.integration.test.ts", "node_modules/**", ".stack/**"],
          environment: "node",
          maxWorkers: SIDE_BY_SIDE_WORKERS,
          // A worker's modules are loaded once for all its unit files, not once per file: the 117
          // files took 48 s and 56 CPU-seconds isolated, 33 s and 21 CPU-seconds so. The unit files
          // mock no module and restore what they stub; they pass in any order (--sequence.shuffle).
          isolate: false,
        },
      },
      {
        resolve: { alias: { "@": root } },
        test: {
          name: "integration",
          include: ["{server,lib,scripts,app,infra}/**/*.integration.test.ts"],
          exclude: ["node_modules/**", ".stack/**", ...INTEGRATION_ALONE, ...INTEGRATION_CLUSTER],
          environment: "node",
          maxWorkers: SIDE_BY_SIDE_WORKERS,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      oneAtATime("integration-alone", INTEGRATION_ALONE),
      oneAtATime("integration-cluster", INTEGRATION_CLUSTER),
      {
        resolve: { alias: { "@": root } },
        test: {
          name: "e2e",
          include: ["e2e/**/*.e2e.test.ts"],
          environment: "node",
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
