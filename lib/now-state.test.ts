import { describe, expect, it } from "vitest";
import { nowState } from "./now-state";

describe("now against the alert window", () => {
  it("says recovering when now is fine and the window still breaches, starting for the reverse", () => {
    expect(nowState(0, 4.1, 0)).toBe("recovering");
    expect(nowState(0.023, 0.447, 0.05)).toBe("recovering");
    expect(nowState(0.3, 0.04, 0.05)).toBe("starting");
  });

  it("says nothing when both agree or one has no value", () => {
    expect(nowState(0.3, 0.2, 0.05)).toBeNull();
    expect(nowState(0, 0, 0)).toBeNull();
    expect(nowState(null, 0.2, 0.05)).toBeNull();
    expect(nowState(0.01, undefined, 0.05)).toBeNull();
  });
});
