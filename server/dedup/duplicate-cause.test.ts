import { describe, expect, it } from "vitest";
import { doneValue, duplicateCause, isDoneValue, positionOf } from "./duplicate-cause";
import { duplicateCauseSuite } from "./duplicate-cause.suite";
import { MemoryRepository } from "./memory-repository";
import { parseClaimValue } from "./repository";

describe("done value with a position", () => {
  it("encodes, decodes and classifies", () => {
    expect(positionOf({ topic: "demo.events", partition: 3, offset: "18244" })).toBe("demo.events:3:18244");
    expect(positionOf({ topic: "demo.events", offset: "1" })).toBeUndefined();
    expect(positionOf({})).toBeUndefined();
    expect(doneValue("demo.events:3:18244")).toBe("done:demo.events:3:18244");
    expect(doneValue(undefined)).toBe("done");
    expect(parseClaimValue("done:demo.events:3:18244")).toEqual({ state: "done", position: "demo.events:3:18244" });
    expect(parseClaimValue("done")).toEqual({ state: "done" });
    expect(isDoneValue("done:t:0:1")).toBe(true);
    expect(isDoneValue("processing:abc")).toBe(false);
    expect(duplicateCause("done:t:0:1", "t:0:1")).toBe("redelivery");
    expect(duplicateCause("done:t:0:1", "t:0:11")).toBe("republish");
    expect(duplicateCause("done:t:0:11", "t:0:1")).toBe("republish");
    expect(duplicateCause("done:t:0:1", "u:0:1")).toBe("republish");
    for (const stored of ["done", "claimed:tok", "1"]) expect(duplicateCause(stored, "t:0:1")).toBe("unknown");
    expect(duplicateCause("done:t:0:1", undefined)).toBe("unknown");
  });
});

describe("duplicate causes on the in-memory repository", () => {
  let n = 0;
  duplicateCauseSuite(() => {
    const repository = new MemoryRepository();
    return { repository, get: async (k) => repository.get(k), service: `mem${n++}` };
  });
});
