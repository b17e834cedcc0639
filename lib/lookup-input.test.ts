import { describe, expect, it } from "vitest";
import { parseLookupInput } from "./lookup-input";

describe("key lookup input", () => {
  it("a whole key as redis-cli --scan prints it gives its handler prefix and id", () => {
    expect(parseLookupInput("notification:dedup:on-review-created:01JD8X3QZ7KZ5S6V9W0X1Y2Z3A")).toEqual({
      ok: true,
      id: "01JD8X3QZ7KZ5S6V9W0X1Y2Z3A",
      prefix: "notification:dedup:on-review-created",
    });
  });
  it("ULIDs are case-insensitive: any case becomes upper case, in a whole key too", () => {
    expect(parseLookupInput(" 01jd8x3qz7kz5s6v9w0x1y2z3a ")).toEqual({ ok: true, id: "01JD8X3QZ7KZ5S6V9W0X1Y2Z3A" });
    expect(parseLookupInput("svc:dedup:h:01jd8x3qz7kz5s6v9w0x1y2z3a")).toMatchObject({
      id: "01JD8X3QZ7KZ5S6V9W0X1Y2Z3A",
    });
  });
  it("a UUID is kept as typed", () => {
    expect(parseLookupInput("3f2b8c1e-9d4a-4b7e-8f00-1a2b3c4d5e6f")).toEqual({
      ok: true,
      id: "3f2b8c1e-9d4a-4b7e-8f00-1a2b3c4d5e6f",
    });
  });
  it("anything else is refused with the expected forms", () => {
    for (const bad of ["not-a-uuid", "", "01JD8X3Q", "ULIDULIDULIDULIDULIDULIDUL"]) {
      const r = parseLookupInput(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/expected a ULID .* a UUID .* a whole key|Enter a ULID/);
    }
  });
});
