import { describe, expect, it } from "vitest";
import { ownerOfPrefix } from "./key-actions";

describe("Act on keys reads the prefix the product shows", () => {
  it("the handler page's form with its trailing separator names the same handler as the bare prefix", () => {
    expect(ownerOfPrefix("billing:dedup:on-charge:")).toEqual({ service: "billing", handler: "on-charge" });
    expect(ownerOfPrefix(" billing:dedup:on-charge ")).toEqual({ service: "billing", handler: "on-charge" });
    expect(ownerOfPrefix("billing:dedup:on-charge")).toEqual({ service: "billing", handler: "on-charge" });
  });

  it("a prefix of another shape names no handler (the actions are not offered)", () => {
    for (const p of ["billing:dedup:", "billing:other:h", "billing:dedup:h:uuid-1", ":dedup:h"])
      expect(ownerOfPrefix(p), p).toBeNull();
  });
});
