/**
 * Route tests call the route handlers directly: this sets the config they read (what
 * `config()` in server/config.ts builds from the environment at start-up) and cleans up after.
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { parseConfig, type AppConfig } from "@/server/config";
import { setRecordReader } from "@/server/observe/records/records";
import { consumerRuntime } from "@/server/runtime";

const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };

/** Makes the routes read `parseConfig(env)` from now on (`{}`: embedded mode, no services), with `overrides` on top. */
export function useConfig(env: Record<string, string> = {}, overrides: Partial<AppConfig> = {}): void {
  g.__dedupHealthConfig = { ...parseConfig(env), ...overrides };
}

/**
 * The file's tests set the config the routes read ({@link useConfig}) for themselves: the record
 * reader built from another config is dropped before them and theirs after them, and then the
 * config from before the file is put back.
 */
export function configOfFile(): void {
  let before: unknown;
  beforeAll(async () => {
    before = g.__dedupHealthConfig;
    await setRecordReader(null);
  });
  afterAll(async () => {
    await setRecordReader(null);
    g.__dedupHealthConfig = before;
  });
}

/**
 * Headers Next.js' server gives a request from this machine (its copy of the loopback peer address
 * and a loopback Host): what server/access.ts lets change state without a token.
 */
export const LOCAL_REQUEST_HEADERS: Readonly<Record<string, string>> = {
  host: "localhost:3000",
  "x-forwarded-for": "127.0.0.1",
};

/**
 * Every test of the file starts from the embedded config, with the server taken as bound to
 * 127.0.0.1 (what `npm start` does: the origin Next.js records once listening); after the file the
 * consumer runtime is closed and the config and origin removed, so the next file builds its own.
 */
export function embeddedConfigPerTest(): void {
  const before = process.env.__NEXT_PRIVATE_ORIGIN;
  beforeAll(() => {
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  });
  beforeEach(() => useConfig());
  afterAll(async () => {
    await consumerRuntime().close();
    delete g.__dedupHealthConfig;
    if (before === undefined) delete process.env.__NEXT_PRIVATE_ORIGIN;
    else process.env.__NEXT_PRIVATE_ORIGIN = before;
  });
}
