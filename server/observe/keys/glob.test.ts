import { describe, expect, it } from "vitest";
import { expectEach } from "@/server/testing/expect-each";
import { escapeGlob, globToLuaPattern, globToRegExp, PrefixGlobs, prefixOfKey, splitPrefix } from "./glob";

describe("escapeGlob", () => {
  it("escapes every glob character so the escaped text only matches itself", () => {
    for (const s of ["a*b", "x?y", "[abc]", "back\\slash", "^caret", "plain:dedup:h", "ü*[!]"]) {
      const re = globToRegExp(escapeGlob(s));
      expect(re.test(s)).toBe(true);
      expect(re.test(`${s}x`)).toBe(false);
      if (s.includes("*")) expect(re.test(s.replace("*", "zzz"))).toBe(false);
    }
  });
});

describe("globToRegExp", () => {
  it("takes a dash outside a set literally (DEDUP_PREFIXES=my-service:dedup:* is a valid glob)", () => {
    const re = globToRegExp("my-service:dedup:*");
    expect(re.test("my-service:dedup:h:1")).toBe(true);
    expect(re.test("myXservice:dedup:h:1")).toBe(false);
  });
  it("follows Redis glob semantics for *, ?, sets, ranges and negation", () => {
    const re = globToRegExp("*:dedup:*");
    expect(re.test("notification:dedup:on-review-created:01JD")).toBe(true);
    expect(re.test("notification:cache:x")).toBe(false);
    expect(globToRegExp("a?c").test("abc")).toBe(true);
    expect(globToRegExp("a?c").test("ac")).toBe(false);
    expect(globToRegExp("h[a-c]x").test("hbx")).toBe(true);
    expect(globToRegExp("h[^a-c]x").test("hbx")).toBe(false);
    expect(globToRegExp("h[!a-c]x").test("hdx")).toBe(true);
    expect(globToRegExp("a\\*b").test("a*b")).toBe(true);
    expect(globToRegExp("a\\*b").test("axb")).toBe(false);
  });
});

describe("globToLuaPattern", () => {
  it("escapes Lua magic characters and anchors the pattern", () => {
    expectEach(globToLuaPattern, {
      "*:dedup:*": ":dedup:",
      "orders:idem:*": "^orders:idem:",
      "*:idem": ":idem$",
      "*": "",
      "a*b": "^a.-b$",
      "a-b.c%d": "^a%-b%.c%%d$",
      "x[a-c]?": "^x[a-c].$",
    });
  });
});

describe("PrefixGlobs", () => {
  it("matches any of several globs and refuses an empty list", () => {
    const g = new PrefixGlobs(["*:dedup:*", "orders:idem:*"]);
    expect(g.matches("orders:idem:h:1")).toBe(true);
    expect(g.matches("orders:cache:1")).toBe(false);
    expect(() => new PrefixGlobs([])).toThrow(RangeError);
  });
});

describe("splitPrefix / prefixOfKey", () => {
  it("splits <service>:dedup:<handler> and falls back to first segment = service", () => {
    expect(splitPrefix("notification:dedup:on-review-created")).toEqual({
      service: "notification",
      handler: "on-review-created",
      prefix: "notification:dedup:on-review-created",
    });
    expect(splitPrefix("orders:idem:charge")).toMatchObject({ service: "orders", handler: "idem:charge" });
    expect(prefixOfKey("a:dedup:h:01JD")).toBe("a:dedup:h");
  });
});
