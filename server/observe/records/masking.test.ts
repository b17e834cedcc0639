import { describe, expect, it } from "vitest";
import { MASK_MARKER, parseMaskRules, type MaskRule } from "@/lib/api/masking";
import { ConfigError, parseConfig } from "@/server/config";
import type { RawRecord } from "./log-reader";
import { hidesHeader, maskJson, maskRecord, maskerOf, pointerSegments } from "./masking";
import { maskedRecordView } from "./records";

const rec = (
  value: string | Buffer | null,
  headers: RawRecord["headers"] = {},
  topic = "billing.events",
): RawRecord => ({
  topic,
  partition: 0,
  offset: 7n,
  timestamp: 0,
  key: null,
  value: typeof value === "string" ? Buffer.from(value) : value,
  headers,
});

const payloadOf = (r: RawRecord) => JSON.parse(r.value!.toString()) as unknown;

describe("MASK_RULES parsing", () => {
  it("takes pointer and header rules with MASK or REMOVE", () => {
    const r = parseMaskRules(
      '[{"topic":"billing.events","pointer":"/card/number","action":"MASK"},{"topic":"*","header":"x-user-email","action":"REMOVE"}]',
    );
    expect(r).toEqual({
      ok: true,
      rules: [
        { topic: "billing.events", pointer: "/card/number", action: "MASK" },
        { topic: "*", header: "x-user-email", action: "REMOVE" },
      ],
    });
  });

  it.each([
    ["not JSON", "[{topic:1}]", /^not JSON: expected a JSON array/],
    ["an object instead of a list", '{"topic":"t"}', /expected array/i],
    [
      "an unknown action",
      '[{"topic":"t","pointer":"/a","action":"HIDE"}]',
      /^rule 0 \(action\): expected action MASK or REMOVE/,
    ],
    ["neither pointer nor header", '[{"topic":"t","action":"MASK"}]', /^rule 0: expected either pointer or header/],
    [
      "both pointer and header",
      '[{"topic":"t","pointer":"/a","header":"h","action":"MASK"}]',
      /^rule 0: expected either pointer or header/,
    ],
    [
      "a pointer without its leading slash",
      '[{"topic":"t","pointer":"card/number","action":"MASK"}]',
      /^rule 0 \(pointer\): expected a JSON pointer/,
    ],
    [
      "a bad ~ escape",
      '[{"topic":"t","pointer":"/a~2","action":"MASK"}]',
      /^rule 0 \(pointer\): expected a JSON pointer/,
    ],
    ["an unknown field", '[{"topic":"t","header":"h","action":"MASK","extra":1}]', /^rule 0: /],
  ])("refuses %s, naming the rule and the expected form", (_, text, message) => {
    const r = parseMaskRules(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });

  it("a bad MASK_RULES stops start-up with an error naming the variable; unset means no rules", () => {
    expect(() => parseConfig({ MASK_RULES: '[{"topic":"t","action":"MASK"}]' })).toThrow(ConfigError);
    expect(() => parseConfig({ MASK_RULES: "nope" })).toThrow(/MASK_RULES — not JSON/);
    expect(parseConfig({}).MASK_RULES).toEqual([]);
    expect(parseConfig({ MASK_RULES: '[{"topic":"t","header":"h","action":"REMOVE"}]' }).MASK_RULES).toEqual([
      { topic: "t", header: "h", action: "REMOVE" },
    ]);
  });
});

describe("JSON pointer masking", () => {
  it("unescapes ~1 and ~0 in segments", () => {
    expect(pointerSegments("/a~1b/c~0d/0")).toEqual(["a/b", "c~d", "0"]);
    expect(pointerSegments("")).toEqual([]);
  });

  it("masks a nested field keeping its key, and removes another", () => {
    const { doc, hits } = maskJson(
      { customer: { email: "a@b.c", name: "Ann" }, card: { number: "4111", exp: "12/30" } },
      [
        { pointer: "/customer/email", action: "MASK" },
        { pointer: "/card/number", action: "REMOVE" },
      ],
    );
    expect(doc).toEqual({ customer: { email: MASK_MARKER, name: "Ann" }, card: { exp: "12/30" } });
    expect(hits).toEqual(["/customer/email", "/card/number"]);
  });

  it("follows array indices, and * over every element (removing elements from an array)", () => {
    const doc = () => ({
      items: [
        { sku: "a", price: 1 },
        { sku: "b", price: 2 },
      ],
      tags: ["x", "y", "z"],
    });
    expect(maskJson(doc(), [{ pointer: "/items/1/price", action: "MASK" }]).doc).toEqual({
      items: [
        { sku: "a", price: 1 },
        { sku: "b", price: MASK_MARKER },
      ],
      tags: ["x", "y", "z"],
    });
    expect(maskJson(doc(), [{ pointer: "/items/*/sku", action: "REMOVE" }]).doc).toEqual({
      items: [{ price: 1 }, { price: 2 }],
      tags: ["x", "y", "z"],
    });
    expect(maskJson(doc(), [{ pointer: "/tags/1", action: "REMOVE" }]).doc).toEqual({
      items: doc().items,
      tags: ["x", "z"],
    });
    expect(maskJson(doc(), [{ pointer: "/tags/*", action: "MASK" }]).doc).toEqual({
      items: doc().items,
      tags: [MASK_MARKER, MASK_MARKER, MASK_MARKER],
    });
  });

  it("a missing path, an index past the end or a path through a scalar masks nothing", () => {
    const d = { a: { b: 1 }, list: [1], s: "text" };
    const { doc, hits } = maskJson(structuredClone(d), [
      { pointer: "/a/c", action: "MASK" },
      { pointer: "/list/3", action: "REMOVE" },
      { pointer: "/list/01", action: "REMOVE" },
      { pointer: "/s/0", action: "MASK" },
      { pointer: "/nope/deeper", action: "REMOVE" },
    ]);
    expect(doc).toEqual(d);
    expect(hits).toEqual([]);
  });

  it("an empty pointer masks or removes the whole document", () => {
    expect(maskJson({ a: 1 }, [{ pointer: "", action: "MASK" }]).doc).toBe(MASK_MARKER);
    expect(maskJson({ a: 1 }, [{ pointer: "", action: "REMOVE" }]).doc).toBeUndefined();
  });
});

describe("record masking", () => {
  const rules: MaskRule[] = [
    { topic: "billing.events", pointer: "/card/number", action: "MASK" },
    { topic: "billing.events", pointer: "/customer/email", action: "REMOVE" },
    { topic: "*", header: "X-User-Email", action: "REMOVE" },
    { topic: "billing.events", header: "x-tenant", action: "MASK" },
  ];

  it("masks the payload fields and headers of the topic's records and lists what it masked", () => {
    const r = rec('{"card":{"number":"4111 1111"},"customer":{"email":"ann@example.com","id":3}}', {
      "x-user-email": "ann@example.com",
      "x-tenant": ["t1", "t2"],
      other: "kept",
    });
    const m = maskRecord(r, rules);
    expect(payloadOf(m.record)).toEqual({ card: { number: MASK_MARKER }, customer: { id: 3 } });
    expect(m.record.headers).toEqual({ "x-tenant": [MASK_MARKER, MASK_MARKER], other: "kept" });
    expect(m.masked).toEqual([
      { in: "payload", field: "/card/number", action: "MASK" },
      { in: "payload", field: "/customer/email", action: "REMOVE" },
      { in: "header", field: "x-user-email", action: "REMOVE" },
      { in: "header", field: "x-tenant", action: "MASK" },
    ]);
    expect(r.value!.toString()).toContain("4111 1111"); // the record read stays as it was
  });

  it("applies a topic's rules to its DLQ topic's records, and no other topic's rules", () => {
    const body = '{"card":{"number":"4111"}}';
    expect(payloadOf(maskRecord(rec(body, {}, "billing.events.dlq"), rules).record)).toEqual({
      card: { number: MASK_MARKER },
    });
    expect(maskRecord(rec(body, {}, "orders"), rules).record.value!.toString()).toBe(body);
  });

  it("masks a payload that is not JSON whole when its topic has pointer rules, and says so", () => {
    for (const value of ["card=4111 1111", Buffer.from([0xff, 0xfe, 0x00, 0x41])]) {
      const m = maskRecord(rec(value), rules);
      expect(m.record.value!.toString()).toBe(MASK_MARKER);
      expect(m.masked).toContainEqual({ in: "payload", field: "/card/number", action: "MASK", whole: true });
    }
    // Header rules alone never touch a payload.
    expect(maskRecord(rec("plain text", {}, "orders"), rules).record.value!.toString()).toBe("plain text");
  });

  it("a caller with unmasked sees the record whole; the view lists what a masked caller did not see", () => {
    const r = rec('{"card":{"number":"4111"}}', { "x-tenant": "t1" });
    const open = maskerOf(rules, () => true)(r);
    expect(open).toEqual({ record: r, masked: null });
    const view = maskedRecordView(
      r,
      maskerOf(rules, () => false),
    );
    expect(view.payload?.text).toBe(`{"card":{"number":"${MASK_MARKER}"}}`);
    expect(view.headers).toEqual([{ key: "x-tenant", value: { encoding: "utf-8", text: MASK_MARKER } }]);
    expect(view.size).toBe(
      maskedRecordView(
        r,
        maskerOf(rules, () => true),
      ).size,
    );
    expect(view.masked).toHaveLength(2);
    expect(hidesHeader(maskRecord(r, rules), "X-TENANT")).toBe(true);
    expect(
      maskedRecordView(
        r,
        maskerOf([], () => false),
      ).masked,
    ).toBeUndefined();
  });
});
