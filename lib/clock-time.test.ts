import { describe, expect, it } from "vitest";
import { formatInstant } from "./clock-time";

describe("an instant reads the same on every page", () => {
  const local = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
    new Date(y, mo, d, h, mi, s).getTime();
  const now = local(2026, 11, 7, 12, 0, 0);
  it("today: the 24-hour clock with seconds, no AM/PM and no ISO string", () => {
    expect(formatInstant(new Date(local(2026, 11, 7, 10, 59, 9)).toISOString(), now)).toBe("10:59:09");
    expect(formatInstant(local(2026, 11, 7, 23, 5, 0), now)).toBe("23:05:00");
  });
  it("another day names it; another year too", () => {
    expect(formatInstant(local(2026, 11, 6, 9, 1, 2), now)).toBe("Dec 6 09:01:02");
    expect(formatInstant(local(2025, 0, 3, 9, 1, 2), now)).toBe("Jan 3 2025 09:01:02");
  });
  it("no instant, no time", () => {
    expect(formatInstant(null, now)).toBe("—");
    expect(formatInstant("not a time", now)).toBe("—");
  });
});
