import { describe, expect, it } from "vitest";
import {
  formatBurst,
  formatBytes,
  formatByUnit,
  formatCount,
  formatDurationMs,
  formatPercent,
  formatRate,
  formatSeconds,
  formatSecondsAsMs,
  formatSince,
  withHiddenWords,
} from "./format";

describe("format: every number carries its unit", () => {
  it("ratios as percentages, small ones with two decimals", () => {
    expect(formatPercent(0.1)).toBe("10%");
    expect(formatPercent(0.1234)).toBe("12.3%");
    expect(formatPercent(0.0042)).toBe("0.42%");
    expect(formatPercent(0)).toBe("0%");
    expect(formatPercent(null)).toBe("—");
    expect(formatPercent(Number.NaN)).toBe("—");
  });
  it("seconds as milliseconds", () => {
    expect(formatSecondsAsMs(0.05)).toBe("50 ms");
    expect(formatSeconds(0.25)).toBe("250 ms");
    expect(formatSeconds(31.42)).toBe("31.4 s");
    expect(formatSeconds(null)).toBe("—");
    expect(formatSecondsAsMs(0.0012)).toBe("1.2 ms");
    expect(formatSecondsAsMs(0.0004)).toBe("0.4 ms");
  });
  it("rates, counts and bytes", () => {
    expect(formatRate(3.456)).toBe("3.46/s");
    expect(formatRate(0.0123, "errors")).toBe("0.012 errors/s");
    expect(formatCount(12345)).toBe("12,345 keys");
    expect(formatBytes(80)).toBe("80 bytes");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5 MiB");
  });
  it("durations: two units, no TTL for -1", () => {
    expect(formatDurationMs(-1)).toBe("no TTL");
    expect(formatDurationMs(86_400_000 + 3_600_000 + 61_000)).toBe("1 d 1 h");
    expect(formatDurationMs(59 * 60_000 + 30_000)).toBe("59 min 30 s");
    expect(formatDurationMs(3_600_000)).toBe("1 h");
    expect(formatDurationMs(250)).toBe("250 ms");
  });
  it("since: relative to now", () => {
    expect(formatSince("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:03:00Z"))).toBe("3 min ago");
    expect(formatSince(null)).toBe("—");
  });
  it("by API unit", () => {
    expect(formatByUnit(0.1, "ratio")).toBe("10%");
    expect(formatByUnit(0.05, "seconds")).toBe("50 ms");
    expect(formatByUnit(2, "per_second")).toBe("2/s");
  });
});

describe("axis ticks stay short", () => {
  it("rounds by magnitude", async () => {
    const { formatTick } = await import("./format");
    expect(formatTick(0.1881, "seconds")).toBe("188 ms");
    expect(formatTick(0.0035, "seconds")).toBe("3.5 ms");
    expect(formatTick(0.121, "ratio")).toBe("12%");
    expect(formatTick(0.035, "ratio")).toBe("3.5%");
    expect(formatTick(0.345, "per_second")).toBe("0.35/s");
    expect(formatTick(0, "ratio")).toBe("0%");
  });
});

describe("rare events stay visible", () => {
  it("a rate under 0.01/s keeps two significant digits", () => {
    expect(formatRate(0.00333)).toBe("0.0033/s");
    expect(formatRate(0.0003, "errors")).toBe("0.0003 errors/s");
    expect(formatRate(0)).toBe("0/s");
  });
  it("a burst reads as a count over the rate window", () => {
    expect(formatBurst(1 / 300, 300_000, "error")).toBe("1 error in 5 min");
    expect(formatBurst(0.04, 300_000, "error")).toBe("12 errors in 5 min");
    expect(formatBurst(0.0001, 300_000, "error")).toBe("< 1 error in 5 min");
    expect(formatBurst(0, 300_000, "error")).toBe("0 errors in 5 min");
    expect(formatBurst(null, 300_000, "error")).toBeNull();
  });
  it("ticks without a step keep two significant digits below 1", async () => {
    const { formatTick } = await import("./format");
    expect(formatTick(0.003, "per_second")).toBe("0.003/s");
  });
});

describe("key counts carry their time and their leases", () => {
  it("done apart from processing, with the leases' share", async () => {
    const { formatLeaseSplit } = await import("./format");
    expect(formatLeaseSplit(1204, 3, 0.0025)).toBe("1,204 done · 3 processing (0.25%)");
    expect(formatLeaseSplit(275, 0, 0, true)).toBe("≈ 275 done · ≈ 0 processing (0%)");
  });
  it("the count's time, and a running recount as a percentage", async () => {
    const { formatCountedAt, formatClockSeconds } = await import("./format");
    const iso = "2026-12-01T18:20:04Z";
    const clock = formatClockSeconds(Date.parse(iso) / 1000);
    expect(formatCountedAt(iso, null)).toBe(`at ${clock}`);
    expect(formatCountedAt(iso, 0.4)).toBe(`at ${clock} · recount 40%`);
    expect(formatCountedAt(null, 0.1)).toBe("not counted yet · recount 10%");
  });
});

describe("capacity warm-up note", () => {
  it("says how old the keys are against their TTL and until when the projection extrapolates, not a share 'filled'", async () => {
    const { formatWindowFill, formatClock } = await import("./format");
    const now = Date.parse("2026-12-01T18:00:00Z");
    const validAt = new Date(now + 23 * 3_600_000 + 2 * 60_000).toISOString();
    expect(
      formatWindowFill({ ageMs: 58 * 60_000, filled: 58 / 1440, validAt, source: "oldest-key" }, "in Redis", now),
    ).toBe(
      `keys 58 min old (oldest key in Redis) of a 1 d TTL: until ${formatClock(Date.parse(validAt) / 1000, true)} the projection extrapolates from 58 min of traffic`,
    );
    const week = formatWindowFill(
      { ageMs: 60_000, filled: 1 / 10_080, validAt, source: "oldest-key" },
      "in the in-memory store",
      now,
    );
    expect(week).toMatch(/^keys 1 min old \(oldest key in the in-memory store\) of a 7 d TTL: until /);
    expect(week).not.toMatch(/filled|%/);
    expect(
      formatWindowFill({ ageMs: 86_400_000, filled: 1, validAt: null, source: "oldest-key" }, "in Redis", now),
    ).toBeNull();
    expect(formatWindowFill(null, "in Redis", now)).toBeNull();
  });
});

describe("withHiddenWords: the redaction's placeholders in words", () => {
  it("a marker 'App started (<host>:3000)' and a member host '<redacted>' read as hidden, not as literal tags", () => {
    expect(withHiddenWords("App started (<host>:3000)")).toBe("App started (host hidden:3000)");
    expect(withHiddenWords("<redacted>")).toBe("address hidden");
    expect(withHiddenWords("redis: <redis> refused")).toBe("redis: redis address hidden refused");
    expect(withHiddenWords("a <b> tag stays")).toBe("a <b> tag stays");
  });
});
