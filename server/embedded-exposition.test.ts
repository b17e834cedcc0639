import { describe, expect, it } from "vitest";
import { markEmbedded } from "./embedded-exposition";

describe("an embedded app's exposition marks every series as the demo's", () => {
  it('adds mode="embedded" to labelled and unlabelled samples, leaving comments and blank lines', () => {
    const text = [
      "# HELP messages_processed_total Processed.",
      "# TYPE messages_processed_total counter",
      'messages_processed_total{service="notification",handler="on-user-banned",result="error"} 35',
      "process_start_time_seconds 1765000000",
      'deduplication_check_duration_seconds_bucket{le="+Inf",service="notification"} 4',
      "",
    ].join("\n");
    expect(markEmbedded(text).split("\n")).toEqual([
      "# HELP messages_processed_total Processed.",
      "# TYPE messages_processed_total counter",
      'messages_processed_total{mode="embedded",service="notification",handler="on-user-banned",result="error"} 35',
      'process_start_time_seconds{mode="embedded"} 1765000000',
      'deduplication_check_duration_seconds_bucket{mode="embedded",le="+Inf",service="notification"} 4',
      "",
    ]);
  });
  it("never writes the label twice", () => {
    expect(markEmbedded('x{mode="embedded"} 1')).toBe('x{mode="embedded"} 1');
    expect(markEmbedded('x{failure_mode="open"} 1')).toBe('x{mode="embedded",failure_mode="open"} 1');
  });
});
