import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ALL_DEDUP_KEYS_GLOB,
  DEDUP_ERROR_REASONS,
  dedupKeyPrefix,
  POISON_REASON_CLASSES,
  STACK_ORDER,
  stackOrder,
} from "./dedup";

describe("names", () => {
  it("imports nothing, so the browser and the rule generator can read it without prom-client or Node", () => {
    const src = readFileSync(new URL("./dedup.ts", import.meta.url), "utf8");
    expect(src).not.toMatch(/^\s*(import\s|export\s+(\*|type\s*\{|\{)[^;]*\sfrom\s)/m);
    expect(src).not.toMatch(/\brequire\(|\bimport\(/);
  });

  it("the key prefix is spec §2's <service>:dedup:<handler>", () => {
    expect(dedupKeyPrefix("notification", "on-review-created")).toBe("notification:dedup:on-review-created");
    expect(ALL_DEDUP_KEYS_GLOB).toBe("*:dedup:*");
  });

  it("every store-error reason is also a reason_poisoned class (a fail-closed store failure keeps its reason in the DLQ count)", () => {
    for (const r of DEDUP_ERROR_REASONS) expect(POISON_REASON_CLASSES).toContain(r);
    expect(new Set(POISON_REASON_CLASSES).size).toBe(POISON_REASON_CLASSES.length);
  });

  it("the anti-pattern order moves only the Deduplicator, right after the recoverer", () => {
    expect(stackOrder("spec")).toBe(STACK_ORDER);
    expect(stackOrder("dedup-outside")).toEqual(["correlationId", "recoverer", "deduplicator", "poisonQueue", "retry"]);
    expect([...stackOrder("dedup-outside")].sort()).toEqual([...STACK_ORDER].sort());
  });
});
