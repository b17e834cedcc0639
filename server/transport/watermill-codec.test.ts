import { describe, expect, it } from "vitest";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { decodeRecord, encodeRecord } from "./watermill-codec";

describe("Watermill Kafka wire format", () => {
  it("encodes the UUID as _watermill_message_uuid, metadata as headers, payload as value, no key", () => {
    const rec = encodeRecord({
      uuid: "01J0",
      metadata: { "Event-Type": "review.created", [WATERMILL_UUID_HEADER]: "spoof" },
      payload: Buffer.from("{}"),
    });
    expect(rec).toEqual({
      value: Buffer.from("{}"),
      headers: { "Event-Type": "review.created", [WATERMILL_UUID_HEADER]: "01J0" },
    });
  });

  it("decodes what a Go Watermill producer sends (Buffer headers) and round-trips", () => {
    const d = decodeRecord(
      { [WATERMILL_UUID_HEADER]: Buffer.from("01JD8X"), "Correlation-Id": Buffer.from("c1") },
      Buffer.from("payload"),
    );
    expect(d).toEqual({
      ok: true,
      uuid: "01JD8X",
      metadata: { "Correlation-Id": "c1" },
      payload: Buffer.from("payload"),
    });
    const back = encodeRecord({ uuid: "u", metadata: { a: "b" }, payload: Buffer.from("x") });
    expect(decodeRecord(back.headers, back.value)).toMatchObject({ ok: true, uuid: "u", metadata: { a: "b" } });
  });

  it("refuses (never invents) a UUID that is missing, empty, repeated or not UTF-8", () => {
    for (const headers of [
      {},
      { [WATERMILL_UUID_HEADER]: "" },
      { [WATERMILL_UUID_HEADER]: ["a", "b"] },
      { [WATERMILL_UUID_HEADER]: Buffer.from([0xff, 0xfe]) },
    ]) {
      const d = decodeRecord(headers, Buffer.from("x"));
      expect(d.ok, JSON.stringify(headers)).toBe(false);
      if (!d.ok) expect(d.reason).toMatch(/^marshal: /);
    }
    expect(decodeRecord({ [WATERMILL_UUID_HEADER]: "u" }, null)).toMatchObject({ ok: true, payload: Buffer.alloc(0) });
  });

  it("drops unreadable metadata headers but keeps the message; decodes UTF-8 headers as TextDecoder does", () => {
    const headers = {
      [WATERMILL_UUID_HEADER]: Buffer.from("\ufeff01JD8X"),
      bad: Buffer.from([0xc3, 0x28]),
      many: [Buffer.from("a"), Buffer.from("b")],
      one: [Buffer.from("x")],
      Émoji: Buffer.from("ünï ✓ 🚀"),
      missing: undefined,
    };
    const d = decodeRecord(headers, Buffer.from("p"));
    expect(d).toEqual({
      ok: true,
      uuid: "01JD8X",
      metadata: { one: "x", Émoji: "ünï ✓ 🚀" },
      payload: Buffer.from("p"),
    });
    const inherited = Object.create({ [WATERMILL_UUID_HEADER]: "proto" }) as Record<string, string>;
    expect(decodeRecord(inherited, null).ok).toBe(false);
    expect(decodeRecord(undefined, null).ok).toBe(false);
  });
});
