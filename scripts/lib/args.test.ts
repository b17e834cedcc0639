import { describe, expect, it } from "vitest";
import { arg, flag, intArg, optArg } from "./args";

const argv = ["node", "/x/scripts/bench-scale.ts", "--n", "12", "--json", "out.json", "--quick", "--bad", "1.5"];

describe("script arguments", () => {
  it("reads --name value, with a fallback when absent", () => {
    expect(arg("json", "", argv)).toBe("out.json");
    expect(arg("missing", "dflt", argv)).toBe("dflt");
    expect(optArg("missing", argv)).toBeUndefined();
    expect(flag("quick", argv)).toBe(true);
    expect(flag("slow", argv)).toBe(false);
  });
  it("intArg takes integers in range and names the script and flag otherwise", () => {
    expect(intArg("n", 5, 1, 100, argv)).toBe(12);
    expect(intArg("missing", 5, 1, 100, argv)).toBe(5);
    expect(() => intArg("n", 5, 1, 10, argv)).toThrow("bench-scale: --n must be an integer in [1, 10]");
    expect(() => intArg("bad", 5, 1, 10, argv)).toThrow(RangeError);
  });
});
