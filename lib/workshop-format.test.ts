import { describe, expect, it } from "vitest";
import { tileLabel, tileNote, timelineHeading } from "./workshop-format";
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

describe("the run tiles' words", () => {
  const topics = { topic: "workshop.rebalance.r1", dlq: "workshop.rebalance.r1.dlq" };
  it("a Deduplicated count above the published events says why (rebalance: 260 for 120)", () => {
    const s = { ...summary(380), published: 120, deduplicated: 260 };
    expect(tileNote("deduplicated", { status: "done", summary: s, topics })).toBe(
      "More than the 120 events: every swallowed copy counts, and 380 deliveries brought 260 copies (an event re-read at each rebalance or re-sent is swallowed each time).",
    );
    expect(tileNote("deduplicated", { status: "done", summary: { ...s, deduplicated: 10 }, topics })).toBeNull();
  });

  it("the DLQ tile names the run's own DLQ topic, which the DLQ page does not list", () => {
    expect(tileNote("dlq", { status: "done", summary: summary(30), topics })).toMatch(
      /^In this run's own DLQ topic workshop\.rebalance\.r1\.dlq .*not in the demo's DLQ the DLQ page lists/,
    );
  });

  it("while running every tile counts so far and Lost reads as not handled yet", () => {
    expect(tileLabel("Lost", "lost", { status: "running" })).toBe("Not handled yet");
    expect(tileLabel("Side effects", "sideEffects", { status: "running" })).toBe("Side effects so far");
    expect(tileLabel("Lost", "lost", { status: "done" })).toBe("Lost");
  });
});
