import { describe, expect, it } from "vitest";
import { hotKeysTotalText } from "./hot-keys";

describe("the hot UUIDs' total line", () => {
  it("while every copy fits the sketches, says the list is complete (never 'fewer than 1 copies')", () => {
    const t = hotKeysTotalText(12, 50, 1, "2026-12-07T10:58:23.000Z");
    expect(t).toContain("every UUID swallowed is listed.");
    expect(t).not.toContain("fewer than 1 ");
  });
  it("beyond that, names the bound under which a UUID may be missing", () => {
    expect(hotKeysTotalText(1_000, 50, 2, null)).toContain("a UUID with fewer than 20 copies may be missing");
  });
  it("gives the time as a 24-hour clock like the rest of the page, not a slice of an ISO string", () => {
    const t = hotKeysTotalText(3, 50, 1, "2026-12-07T10:58:23.000Z");
    expect(t).toMatch(/since \d\d:\d\d:23 over 1 replica sketch of this process/);
    expect(t).not.toContain("UTC");
  });
});
