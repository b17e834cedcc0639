import { describe, expect, it } from "vitest";
import { parseExposition } from "./exposition";

describe("parseExposition", () => {
  it("reads the Java simpleclient's form (trailing comma, 1.0 bounds) and prom-client's alike", () => {
    const java = parseExposition(
      [
        "# TYPE messages_processed_total counter",
        'messages_processed_total{service="s",topic="t",handler="h",result="success",} 3.0',
        'messages_processed_total{service="s",topic="t",handler="h",result="error",} 1.0',
        'deduplication_check_duration_seconds_bucket{service="s",le="1.0",} 2.0',
      ].join("\n"),
    );
    const node = parseExposition(
      'messages_processed_total{service="s",topic="t",handler="h",result="success"} 3\nup 1 1700000000000\n',
    );
    expect(java.sum("messages_processed_total", { handler: "h" })).toBe(4);
    expect(node.sum("messages_processed_total", { result: "success" })).toBe(3);
    expect(Number(java.series("deduplication_check_duration_seconds_bucket")[0]!.labels.le)).toBe(1);
    expect(node.sum("up")).toBe(1);
    expect(node.sum("messages_processed_total", { result: "error" })).toBeUndefined();
  });

  it("unescapes label values: a reason with quotes and a comma stays one label", () => {
    const s = parseExposition('x_total{reason="say \\"no\\", then stop",svc="a"} 2');
    expect(s.samples[0]!.labels).toEqual({ reason: 'say "no", then stop', svc: "a" });
  });
});
