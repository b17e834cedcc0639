import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `npm run test:faults` (scripts/test-faults.sh): the reliability and security cases,
 * one file at a time (they start their own redis-server, broker, workers and app on a 2-core
 * machine). The global setup starts the suite's own Kafka broker on 127.0.0.1:19092 and stops it.
 */
export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    name: "faults",
    include: ["test/faults/**/*.faults.test.ts"],
    environment: "node",
    globalSetup: ["test/faults/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 240_000,
    // Each case prints its figures; keep them visible.
    silent: false,
  },
});
