import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AGGREGATE_LUA } from "./scripts";

describe("the key inspection's Lua script", () => {
  // It runs by SHA1 (EVALSHA, loaded on NOSCRIPT) on servers other app versions use too: a change of
  // its text is a deliberate change of this pin.
  it("is the pinned text: its SHA1 is the one every server caches it under", () => {
    expect(createHash("sha1").update(AGGREGATE_LUA).digest("hex")).toBe("fb484ca8823437d807be884801d1f142ba3fa2b6");
  });
});
