import { describe, expect, it } from "vitest";
import { dlqBacklogText, dlqHref, memoryLostText, staleSinceText, uncheckedText } from "./on-call-text";

describe("the on-call notes under a handler's tiles", () => {
  it("fail-open runs without a check are counted with what let them through", () => {
    expect(
      uncheckedText({ status: "ok", total: 312.4, byReason: { redis_conn: 300, redis_timeout: 12.4, marshal: 0 } }),
    ).toBe(
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
    expect(t).toMatch(
      /^Dedup memory lost at \d\d:\d\d:\d\d: 31,000 of 31,004 keys gone \(100(\.0)?%\) — Redis restarted; duplicates within the window will run again$/,
    );
    expect(memoryLostText({ share: 0.5, before: 100, now: 50, at: "2026-12-02T14:05:02Z", cause: "drop" })).toContain(
      "without a restart: a FLUSH, eviction or deletion",
    );
    expect(memoryLostText(null)).toBeNull();
  });
  it("key tiles say since when Redis cannot be read", () => {
    expect(staleSinceText("2026-12-02T14:02:11Z")).toMatch(
      /^stale since \d\d:\d\d:\d\d \(Redis cannot be read; last count kept\)$/,
    );
    expect(staleSinceText(null)).toBeNull();
  });

  it("the DLQ backlog says how many records wait for a re-drive, by reason, and links to the DLQ filtered", () => {
    const b = {
      status: "ok" as const,
      total: 35,
      byReason: { redis_conn: 30, handler_error: 5 },
      newestAt: "2026-12-02T14:03:10Z",
      complete: true,
      dlqTopic: "demo.events.dlq",
    };
    expect(dlqBacklogText(b)).toMatch(
      /^35 DLQ records wait for a re-drive \(redis_conn 30, handler_error 5; newest \d\d:\d\d:\d\d\)$/,
    );
    expect(dlqBacklogText({ ...b, complete: false })).toMatch(/^at least 35 DLQ records wait/);
    expect(dlqBacklogText({ ...b, total: 0, byReason: {} })).toBeNull();
    expect(dlqHref("on-order-paid", b)).toBe("/dlq?handler=on-order-paid");
    expect(dlqHref("on-order-paid", { ...b, byReason: { redis_conn: 35 } })).toBe(
      "/dlq?handler=on-order-paid&reason=redis_conn",
    );
  });
});
