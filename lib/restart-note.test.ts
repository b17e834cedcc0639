import { describe, expect, it } from "vitest";
import { beforeStartText } from "./restart-note";

describe("a figure whose window reaches before this app's start says so", () => {
  const start = Date.parse("2026-12-07T11:14:42Z");
  const b = { appStartedAt: new Date(start).toISOString(), windowSeconds: 300 };
  it("40 s after a start, the 5-min figures still hold 4 min 20 s from before it", () => {
    const t = beforeStartText(b, start + 40_000);
    expect(t).toMatch(/^This app started 40 s ago \(at \d\d:\d\d:42\): the 5 min figures and alerts still include/);
    expect(t).toContain("still include 4 min 20 s from before it");
  });
  it("says nothing once the window lies after the start, or without a start", () => {
    expect(beforeStartText(b, start + 300_000)).toBeNull();
    expect(beforeStartText(null, start)).toBeNull();
    expect(beforeStartText(undefined, start)).toBeNull();
  });
});
