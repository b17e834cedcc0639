import { describe, expect, it } from "vitest";
import {
  doneValue,
  duplicateCause,
  isDoneValue,
  payloadFingerprint,
  positionOf,
  storedFingerprint,
  parseClaimValue,
} from "../repository/stored-value";
import { duplicateCauseSuite } from "./duplicate-cause.suite";
import { MemoryRepository } from "../repository/memory-repository";

describe("done value with a position", () => {
  it("encodes, decodes and classifies", () => {
    expect(positionOf({ topic: "demo.events", partition: 3, offset: "18244" })).toBe("demo.events:3:18244");
    expect(positionOf({ topic: "demo.events", offset: "1" })).toBeUndefined();
    expect(positionOf({})).toBeUndefined();
    expect(doneValue("demo.events:3:18244")).toBe("done:demo.events:3:18244");
    expect(doneValue(undefined)).toBe("done");
    expect(parseClaimValue("done:demo.events:3:18244")).toEqual({ state: "done", position: "demo.events:3:18244" });
    expect(parseClaimValue("done")).toEqual({ state: "done" });
    expect(isDoneValue("done:t:0:1")).toBe(true);
    expect(isDoneValue("processing:abc")).toBe(false);
    expect(duplicateCause("done:t:0:1", "t:0:1")).toBe("redelivery");
    expect(duplicateCause("done:t:0:1", "t:0:11")).toBe("republish");
    expect(duplicateCause("done:t:0:11", "t:0:1")).toBe("republish");
    expect(duplicateCause("done:t:0:1", "u:0:1")).toBe("republish");
    for (const stored of ["done", "claimed:tok", "1"]) expect(duplicateCause(stored, "t:0:1")).toBe("unknown");
    expect(duplicateCause("done:t:0:1", undefined)).toBe("unknown");
  });
});

describe("done value with a payload fingerprint", () => {
  it("stores 8 base64url characters after '#', parses both with and without, and keeps the cause", () => {
    const fp = payloadFingerprint(Buffer.from('{"amount":10}'));
    expect(fp).toMatch(/^[A-Za-z0-9_-]{7}$/);
    expect(payloadFingerprint(Buffer.from('{"amount":10}'))).toBe(fp);
    expect(payloadFingerprint(Buffer.from('{"amount":11}'))).not.toBe(fp);
    expect(doneValue("demo.events:3:18244", fp)).toBe(`done:demo.events:3:18244#${fp}`);
    expect(doneValue(undefined, fp)).toBe(`done#${fp}`);
    expect(parseClaimValue(`done:demo.events:3:18244#${fp}`)).toEqual({
      state: "done",
      position: "demo.events:3:18244",
      fingerprint: fp,
    });
    expect(parseClaimValue(`done#${fp}`)).toEqual({ state: "done", fingerprint: fp });
    expect(storedFingerprint(`done:t:0:1#${fp}`)).toBe(fp);
    expect(storedFingerprint(`done#${fp}`)).toBe(fp);
    for (const old of ["done", "done:t:0:1", "claimed:tok", "1", "processing:abcdefgh#12345678"])
      expect(storedFingerprint(old)).toBeUndefined();
    expect(isDoneValue(`done#${fp}`)).toBe(true);
    expect(duplicateCause(`done:t:0:1#${fp}`, "t:0:1")).toBe("redelivery");
    expect(duplicateCause(`done:t:0:1#${fp}`, "t:0:11")).toBe("republish");
    expect(duplicateCause(`done#${fp}`, "t:0:1")).toBe("unknown");
  });
});

describe("payload fingerprints stay what the stored done values hold", () => {
  it("gives the first 7 base64url characters of the payload's SHA-256, an empty payload included", () => {
    // SHA-256("") = 47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU, SHA-256("abc") = ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0
    expect(payloadFingerprint(new Uint8Array(0))).toBe("47DEQpj");
    expect(payloadFingerprint(Buffer.alloc(0))).toBe("47DEQpj");
    expect(payloadFingerprint(Buffer.from("abc"))).toBe("ungWv48");
  });
});

describe("duplicate causes on the in-memory repository", () => {
  let n = 0;
  duplicateCauseSuite(() => {
    const repository = new MemoryRepository();
    return { repository, get: async (k) => repository.get(k), service: `mem${n++}` };
  });
});
