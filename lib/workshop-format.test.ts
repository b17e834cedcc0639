import { describe, expect, it } from "vitest";
import { timelineHeading } from "./workshop-format";
import type { RunSummary, TimelineEntry } from "@/lib/api/workshop";

const summary = (deliveries: number): RunSummary => ({
  published: 30,
  records: 30,
  deliveries,
  handlerCalls: 40,
  deduplicated: 0,
  sideEffects: 30,
  duplicateSideEffects: 0,
  lost: 0,
  dlq: 0,
});
const entries = (n: number): TimelineEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    at: new Date(i).toISOString(),
    uuid: `u${i}`,
    replica: "r",
    attempt: 1,
    verdict: "processed",
  }));

describe("timelineHeading", () => {
  it("names attempt verdicts and gives the summary's delivery count: the two numbers no longer read as the same thing", () => {
    expect(timelineHeading({ summary: summary(30), timeline: entries(48), timelineTotal: 48 })).toBe(
      "48 attempt verdicts for 30 deliveries",
    );
  });
  it("says when the timeline is capped, and singulars", () => {
    expect(timelineHeading({ summary: summary(1), timeline: entries(1), timelineTotal: 1 })).toBe(
      "1 attempt verdict for 1 delivery",
    );
    expect(timelineHeading({ summary: summary(600), timeline: entries(500), timelineTotal: 700 })).toBe(
      "700 attempt verdicts for 600 deliveries (first 500 shown)",
    );
  });
});
