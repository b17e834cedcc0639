import { describe, expect, it } from "vitest";
import { memoryLostText, staleSinceText, uncheckedText } from "./on-call-notes";

describe("the on-call notes under a handler's tiles", () => {
  it("fail-open runs without a check are counted with what let them through", () => {
    expect(uncheckedText({ status: "ok", total: 312.4, byReason: { redis_conn: 300, redis_timeout: 12.4, marshal: 0 } })).toBe(
      "312 messages ran without a dedup check in 5 min (fail-open: Redis unreachable, checks timed out); a repeat among them ran again",
    );
  });
  it("says nothing when every message was checked, or the count cannot be read", () => {
    expect(uncheckedText({ status: "ok", total: 0, byReason: { redis_conn: 0 } })).toBeNull();
    expect(uncheckedText({ status: "unavailable", detail: "prometheus down" })).toBeNull();
    expect(uncheckedText(undefined)).toBeNull();
  });

  it("a lost dedup memory says how much, when, why, and that duplicates within the window will run again", () => {
    const t = memoryLostText({ share: 0.99987, before: 31_004, now: 4, at: "2026-12-02T14:05:02Z", cause: "restart" });
    expect(t).toMatch(/^Dedup memory lost at \d\d:\d\d:\d\d: 31,000 of 31,004 keys gone \(100(\.0)?%\) — Redis restarted; duplicates within the window will run again$/);
    expect(memoryLostText({ share: 0.5, before: 100, now: 50, at: "2026-12-02T14:05:02Z", cause: "drop" })).toContain("without a restart: a FLUSH, eviction or deletion");
    expect(memoryLostText(null)).toBeNull();
  });
  it("key tiles say since when Redis cannot be read", () => {
    expect(staleSinceText("2026-12-02T14:02:11Z")).toMatch(/^stale since \d\d:\d\d:\d\d \(Redis cannot be read; last count kept\)$/);
    expect(staleSinceText(null)).toBeNull();
  });
});
