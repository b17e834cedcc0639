import { describe, expect, it } from "vitest";
import { uncheckedText } from "./on-call-notes";

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
});
