import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { longestFirst } from "../sequencer";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `npm run test:faults` (scripts/test-faults.sh): the reliability and security cases. The global
 * setup starts the suite's own Kafka broker on 127.0.0.1:19092 once and stops it after every case.
 * Each case starts its own redis-servers, workers and app on free ports, with its own topics,
 * consumer groups and ledger schema, so two cases run side by side (`faults`, two at a time: one
 * case's designed waits — an outage held 30 s, a session timeout — are the other's CPU); the case
 * that stops and restarts that shared broker runs alone, after them (`faults-alone`).
 */
const ALONE = ["test/faults/broker-restart.faults.test.ts"];
/** The two longest cases (5-6 min each beside the unit and integration files) start together, first. */
const LONGEST_FIRST = ["test/faults/sigkill.faults.test.ts", "test/faults/redis-outage.faults.test.ts"];

const common = {
  environment: "node",
  testTimeout: 600_000,
  hookTimeout: 240_000,
  // Each case prints its figures; keep them visible.
  silent: false,
} as const;

export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    globalSetup: ["test/faults/global-setup.ts"],
    sequence: { sequencer: longestFirst(LONGEST_FIRST) },
    projects: [
      {
        resolve: { alias: { "@": root } },
        test: {
          ...common,
          name: "faults",
          include: ["test/faults/**/*.faults.test.ts"],
          exclude: ALONE,
          maxWorkers: 2,
        },
      },
      {
        resolve: { alias: { "@": root } },
        test: { ...common, name: "faults-alone", include: ALONE, fileParallelism: false },
      },
    ],
  },
});
