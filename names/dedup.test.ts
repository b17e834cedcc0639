import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEDUP_ERROR_REASONS, POISON_REASON_CLASSES } from "./dedup";
import { ALL_DEDUP_KEYS_GLOB, dedupKeyPrefix } from "./keys";
import { STACK_ORDER, stackOrder } from "./stack";

describe("names", () => {
  it("imports nothing, so the browser and the rule generator can read it without prom-client or Node", () => {
    // Every file of names/ (split by meaning, each standalone), not only this one.
    const dir = new URL("./", import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    expect(files).toContain("dedup.ts");
    for (const f of files) {
      const src = readFileSync(new URL(f, dir), "utf8");
      expect(src, f).not.toMatch(/^\s*(import\s|export\s+(\*|type\s*\{|\{)[^;]*\sfrom\s)/m);
      expect(src, f).not.toMatch(/\brequire\(|\bimport\(/);
    }
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
