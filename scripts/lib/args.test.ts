import { describe, expect, it } from "vitest";
import { arg, flag, intArg, optArg, scriptName } from "./args";

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
  it("names a script by its path under scripts/, so a benchmark in scripts/bench/ keeps its bench- name", () => {
    expect(scriptName("/w/scripts/bench/scale.ts")).toBe("bench-scale");
    expect(scriptName("scripts/bench/consumer.ts")).toBe("bench-consumer");
    expect(scriptName("/tmp/other/tool.mjs")).toBe("tool");
    expect(scriptName("/w/scripts/conformance.ts")).toBe("conformance");
    expect(scriptName("/home/scripts/app/scripts/bench/ui.ts")).toBe("bench-ui");
    expect(() => intArg("n", 5, 1, 10, ["node", "/w/scripts/bench/ab.ts", "--n", "12"])).toThrow(
      "bench-ab: --n must be an integer in [1, 10]",
    );
  });
});
