import { describe, expect, it } from "vitest";
import { lintDescription } from "./handler-lint";

describe("the lint panel says what the TTL policy is, not where it is written", () => {
  it("gives the policy's figures instead of 'spec §3'", () => {
    const t = lintDescription("in Redis");
    expect(t).toBe(
      "The library's lint (lintHandler) on the declared setup, and the TTL policy on the TTLs seen in Redis: 1 d by default, 7 d for critical events, at most 1 h for analytics, never under 10 min.",
    );
    expect(t).not.toContain("§");
  });
});
