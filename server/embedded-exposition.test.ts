import { describe, expect, it } from "vitest";
import { markEmbedded } from "./embedded-exposition";

describe("an embedded app's exposition marks every series as the demo's", () => {
  it('adds app_mode="embedded" to labelled and unlabelled samples, leaving comments and blank lines', () => {
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
      'messages_processed_total{app_mode="embedded",service="notification",handler="on-user-banned",result="error"} 35',
      'process_start_time_seconds{app_mode="embedded"} 1765000000',
      'deduplication_check_duration_seconds_bucket{app_mode="embedded",le="+Inf",service="notification"} 4',
      "",
    ]);
  });
  it("never writes the label twice", () => {
    expect(markEmbedded('x{app_mode="embedded"} 1')).toBe('x{app_mode="embedded"} 1');
    // dedup_handler_info's own `mode` (the guarantee mode) is another label: the series is still marked.
    expect(markEmbedded('dedup_handler_info{mode="redis"} 1')).toBe(
      'dedup_handler_info{app_mode="embedded",mode="redis"} 1',
    );
    expect(markEmbedded('x{failure_mode="open"} 1')).toBe('x{app_mode="embedded",failure_mode="open"} 1');
  });
});
