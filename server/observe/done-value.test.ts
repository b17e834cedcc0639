import { describe, expect, it } from "vitest";
import { doneValue, positionOf } from "@/server/dedup/duplicate-cause";
import { DONE_VALUE } from "@/server/dedup/repository";
import { classifyValue } from "./key-samples";

describe("key states with the position in the done value", () => {
  it("classifies done:<topic>:<partition>:<offset> as done, like plain done; leases stay processing", () => {
    const withPosition = doneValue(positionOf({ topic: "demo.events", partition: 3, offset: "18244" }));
    expect(withPosition).toBe("done:demo.events:3:18244");
    expect(classifyValue(withPosition)).toBe("done");
    expect(classifyValue(DONE_VALUE)).toBe("done");
    // The key browser reads at most 64 bytes of a value (GETRANGE 0 63): a cut value is still done.
    expect(classifyValue(doneValue(`${"t".repeat(80)}:0:1`).slice(0, 64))).toBe("done");
    expect(classifyValue("processing:abc123")).toBe("processing");
    expect(classifyValue("claimed:abc")).toBe("marked");
    expect(classifyValue("doner")).toBe("other");
  });
});
