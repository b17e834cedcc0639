/**
 * What a test file (or `describe`) starts before its tests and stops after them, through vitest's
 * hooks. Kept apart from e2e/harness.ts, which scripts outside vitest (scripts/bench/ui.ts) import too.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { launchBrowser, startApp, type App } from "./harness";

/**
 * Starts `start()` before the tests of the calling file (or `describe`) and `stop`s it after them.
 * The answer stands in for the running thing: inside a test `app.url` or `browser.newPage()` read
 * as usual; before the start, or after a failed one, reading it throws.
 */
export function startedForTests<T extends object>(start: () => Promise<T>, stop: (running: T) => Promise<unknown>): T {
  let running: T | undefined;
  beforeAll(async () => {
    running = await start();
  });
  afterAll(async () => {
    if (running) await stop(running);
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (!running) throw new Error(`not started: read ${String(key)} inside a test`);
      const v: unknown = Reflect.get(running, key, running);
      return typeof v === "function" ? v.bind(running) : v;
    },
  });
}

/** The built app ({@link startApp} with `opts`) for the tests of the calling file or `describe`. */
export function appForTests(opts?: Parameters<typeof startApp>[0]): App {
  return startedForTests(
    () => startApp(opts),
    (app) => app.stop(),
  );
}

/** Chromium ({@link launchBrowser}) for the tests of the calling file or `describe`. */
export function browserForTests(): Browser {
  return startedForTests(launchBrowser, (browser) => browser.close());
}
