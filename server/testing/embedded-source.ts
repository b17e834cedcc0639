import { Registry } from "prom-client";
import { dedupRecorder } from "@/server/dedup";
import { LocalSource, type LocalSourceOptions } from "@/server/observe/metrics/local";

/**
 * The embedded metrics source (`LocalSource`, sampling every second unless `options` say otherwise)
 * over a fresh registry, with the library's recorder for service `notification` and a clock the test
 * moves: `clock.now` is the time the source reads, `tick(ms)` moves it on and takes a sample (one
 * evaluation of the alerts).
 */
export function embeddedSource(start: number, options: Partial<LocalSourceOptions> = {}) {
  const registry = new Registry();
  const rec = dedupRecorder(registry, "notification");
  const clock = { now: start };
  const src = new LocalSource(registry, { intervalMs: 1000, ...options }, () => clock.now);
  const tick = async (ms: number) => {
    clock.now += ms;
    await src.sample();
  };
  return { registry, rec, src, clock, tick };
}
