import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * Three projects: `unit` (fakes, fake timers, no network), `integration` (`*.integration.test.ts`,
 * real Redis/Kafka/Prometheus/PostgreSQL brought up by `npm run stack:up`) and `e2e` (Playwright
 * with Debian's Chromium against the built app). Integration and e2e files run one at a time: they
 * share one broker and one Redis on a 2-core machine.
 */
export default defineConfig({
  resolve: { alias: { "@": root } },
  test: {
    projects: [
      {
        resolve: { alias: { "@": root } },
        test: {
          name: "unit",
          include: ["{names,server,lib,scripts,app,infra}/**/*.test.ts", "components/**/*.test.tsx"],
          exclude: ["**/*.integration.test.ts", "node_modules/**", ".stack/**"],
          environment: "node",
        },
      },
      {
        resolve: { alias: { "@": root } },
        test: {
          name: "integration",
          include: ["{server,lib,scripts,app,infra}/**/*.integration.test.ts"],
          exclude: ["node_modules/**", ".stack/**"],
          environment: "node",
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
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
