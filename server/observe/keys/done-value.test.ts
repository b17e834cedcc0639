import { describe, expect, it } from "vitest";
import { doneValue, positionOf, DONE_VALUE } from "@/server/dedup";
import { classifyValue, donePosition, VALUE_READ_BYTES } from "./samples";

describe("key states with the position in the done value", () => {
  it("classifies done:<topic>:<partition>:<offset> as done, like plain done; leases stay processing", () => {
    const withPosition = doneValue(positionOf({ topic: "demo.events", partition: 3, offset: "18244" }));
    expect(withPosition).toBe("done:demo.events:3:18244");
    expect(classifyValue(withPosition)).toBe("done");
    expect(classifyValue(DONE_VALUE)).toBe("done");
    // The sampler reads at most 64 bytes of a value (GETRANGE 0 63): a cut value is still done.
    expect(classifyValue(doneValue(`${"t".repeat(80)}:0:1`).slice(0, 64))).toBe("done");
    expect(classifyValue("processing:abc123")).toBe("processing");
    expect(classifyValue("claimed:abc")).toBe("marked");
    expect(classifyValue("doner")).toBe("other");
    expect(classifyValue(doneValue(undefined, "AbC_-12"))).toBe("done");
    expect(classifyValue(doneValue("demo.events:3:18244", "AbC_-12"))).toBe("done");
  });

  it("finds the record a done value names, for the longest topic name the key browser reads whole", () => {
    const longest = "t".repeat(249);
    const v = doneValue(positionOf({ topic: longest, partition: 12, offset: "9223372036854775807" }), "AbC_-12");
    expect(v.length).toBeLessThanOrEqual(VALUE_READ_BYTES);
    expect(donePosition(v)).toEqual({ topic: longest, partition: 12, offset: "9223372036854775807" });
    expect(donePosition("done:demo.events:3:18244#AbC_-12")).toEqual({
      topic: "demo.events",
      partition: 3,
      offset: "18244",
    });
    expect(donePosition("done:demo.events:3:18244")).toEqual({ topic: "demo.events", partition: 3, offset: "18244" });
    // Plain done, a lease, a cut value: no record to open.
    for (const x of [DONE_VALUE, "processing:abc", "done:demo.events:3", v.slice(0, 64)])
      expect(donePosition(x)).toBeNull();
  });
});
