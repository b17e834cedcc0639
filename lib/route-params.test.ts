import { describe, expect, it } from "vitest";
import { routeName } from "./route-params";

describe("routeName", () => {
  it("keeps a decoded name as it is and refuses what a second decoding or a control character would need", () => {
    expect(routeName("on-review-created")).toBe("on-review-created");
    expect(routeName("a b")).toBe("a b");
    for (const bad of ["", "%zz", "%25", "%", "a/b", "x\u0000", "a".repeat(201)])
      expect(routeName(bad), JSON.stringify(bad)).toBeNull();
  });
});
