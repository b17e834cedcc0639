import { describe, expect, it } from "vitest";
import { nowState, quietBoundSeconds, type NowState } from "./now-state";

describe("now against the alert window", () => {
  it("says recovering when now is fine and the window still breaches, starting for the reverse", () => {
    expect(nowState(0, 4.1, 0)).toBe("recovering");
    expect(nowState(0.023, 0.447, 0.05)).toBe("recovering");
    expect(nowState(0.3, 0.04, 0.05)).toBe("starting");
  });

  it("says nothing when both agree or one has no value", () => {
    expect(nowState(0.3, 0.2, 0.05)).toBeNull();
    expect(nowState(0, 0, 0)).toBeNull();
    expect(nowState(null, 0.2, 0.05)).toBeNull();
    expect(nowState(0.01, undefined, 0.05)).toBeNull();
  });
});

/**
 * Checks every `1 / perSec` s from 0 to `untilSec`, `bad(i, t)` deciding each; read at scrapes every
 * second as the page reads them: the window's bad checks per second (5 min), "now" (the last
 * interval's), and the seconds from the last bad check to the scrape (0 without a check after it).
 */
function scrapes(perSec: number, untilSec: number, bad: (i: number, t: number) => boolean) {
  const checks: Array<{ t: number; bad: boolean }> = [];
  for (let i = 0; i * (1 / perSec) <= untilSec; i++) checks.push({ t: i / perSec, bad: bad(i, i / perSec) });
  const out: Array<{
    t: number;
    words: { evidence: NowState | null; irateOnly: NowState | null };
    quiet: number;
    bound: number | null;
  }> = [];
  for (let t = 1; t <= untilSec; t++) {
    const seen = checks.filter((c) => c.t <= t);
    const badSeen = seen.filter((c) => c.bad);
    const window = badSeen.filter((c) => c.t > t - 300).length / 300;
    const now = badSeen.filter((c) => c.t > t - 1).length;
    const lastBad = badSeen.at(-1)?.t;
    const lastCheck = seen.at(-1)!.t;
    const quiet = lastBad === undefined ? null : lastCheck > lastBad ? t - lastBad : 0;
    out.push({
      t,
      quiet: quiet ?? NaN,
      bound: quietBoundSeconds(window),
      words: {
        evidence: nowState(now, window, 0, { seconds: quiet, badRate: window }),
        irateOnly: nowState(now, window, 0),
      },
    });
  }
  return out;
}

/** A deterministic pseudo-random sequence in [0, 1) (the same run every time). */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe("recovering from the quiet since the last bad check", () => {
  it("a partial fault failing one check in ten is never 'recovering' while it goes on, though 'now' often reads 0", () => {
    const rnd = lcg(28);
    const run = scrapes(10, 240, () => rnd() < 0.1);
    expect(run.map((s) => s.words.evidence)).not.toContain("recovering");
    // The same run read by "now" alone: intervals without an error, read as the fault's end.
    expect(run.filter((s) => s.words.irateOnly === "recovering").length).toBeGreaterThan(10);
    // Every error is followed by successes: "a check succeeded after the last error" alone would call it over.
    expect(run.filter((s) => s.quiet > 0).length).toBeGreaterThan(100);
  });

  it("a total outage is 'recovering' at the first scrape whose quiet passes the bound, not before", () => {
    // 60 s of 10 checks/s all failing, then all fine: 600 bad checks in the window, 2/s, bound 3.45 s.
    const run = scrapes(10, 80, (_i, t) => t < 60);
    const after = run.filter((s) => s.t >= 60);
    const bound = after[0]!.bound!;
    expect(bound).toBeCloseTo(-Math.log(0.001) / 2, 3);
    for (const s of after)
      expect(s.words.evidence, `${s.t - 60} s after the end, quiet ${s.quiet} s`).toBe(
        s.quiet >= bound ? "recovering" : null,
      );
    const first = after.find((s) => s.words.evidence === "recovering")!;
    expect(first.t - 60).toBe(Math.ceil(bound));
    // During the outage: "now" breaches with the window, no word.
    expect(run.filter((s) => s.t < 60).every((s) => s.words.evidence === null)).toBe(true);
  });

  it("a heavy fault is over within one scrape of its end: the bound shrinks with the fault's rate", () => {
    // 8,400 bad checks in the window (800/s for 10.5 s): bound 0.25 s. The scrape at 11 s is the
    // first after the end; its interval still holds half a second of the fault, so "now" breaches.
    const run = scrapes(800, 15, (_i, t) => t <= 10.5);
    expect(run.find((s) => s.t === 11)!.words.evidence).toBe("recovering");
    expect(run.find((s) => s.t === 11)!.words.irateOnly).toBeNull();
  });

  it("needs a check after the last bad one, and a rate to bound the quiet by", () => {
    expect(nowState(0, 2, 0, { seconds: 0, badRate: 2 })).toBeNull();
    expect(nowState(0, 2, 0, { seconds: 3, badRate: 2 })).toBeNull();
    expect(nowState(5, 2, 0, { seconds: 3.5, badRate: 2 })).toBe("recovering");
    // No evidence (no bad check in any live process, or a consumer without the gauges): "now" decides.
    expect(nowState(0, 2, 0, { seconds: null, badRate: 2 })).toBe("recovering");
    expect(nowState(0, 2, 0, { seconds: 10, badRate: null })).toBe("recovering");
    // A blip already over does not read as starting.
    expect(nowState(5, 0.01, 0.05, { seconds: 1e6, badRate: 1 })).toBeNull();
    // A quantile under its threshold over the last interval is fine now, even if a stray slow
    // check keeps the quiet short; an error count is not.
    expect(nowState(0.01, 0.1, 0.05, { seconds: 0.1, badRate: 1, nowSuffices: true })).toBe("recovering");
    expect(nowState(0.01, 0.1, 0.05, { seconds: 0.1, badRate: 1 })).toBeNull();
  });
});

describe("recovering needs the other figures of the same cause quiet too", () => {
  it("during a Redis outage the slow checks stop (failed checks are not timed): with 15.8 errors/s now the p99 tile is not 'recovering'", () => {
    // 30 s without a slow check at the window's 1 slow check/s: the quiet alone says the latency fault is over.
    const quiet = { seconds: 30, badRate: 1, nowSuffices: true };
    expect(nowState(0.2158, 0.2409, 0.05, quiet)).toBe("recovering");
    expect(nowState(0.2158, 0.2409, 0.05, { ...quiet, othersNow: 15.8 })).toBeNull();
    expect(nowState(0.2158, 0.2409, 0.05, { ...quiet, othersNow: 0 })).toBe("recovering");
  });
});
