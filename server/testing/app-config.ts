/**
 * Route tests call the route handlers directly: this sets the config they read (what
 * `config()` in server/config.ts builds from the environment at start-up) and cleans up after.
 */
import { afterAll, beforeEach } from "vitest";
import { parseConfig } from "@/server/config";
import { consumerRuntime } from "@/server/runtime";

const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };

/** Makes the routes read `parseConfig(env)` from now on (`{}`: embedded mode, no services). */
export function useConfig(env: Record<string, string> = {}): void {
  g.__dedupHealthConfig = parseConfig(env);
}

/**
 * Every test of the file starts from the embedded config; after the file the consumer runtime is
 * closed and the config removed, so the next file builds its own.
 */
export function embeddedConfigPerTest(): void {
  beforeEach(() => useConfig());
  afterAll(async () => {
    await consumerRuntime().close();
    delete g.__dedupHealthConfig;
  });
}
