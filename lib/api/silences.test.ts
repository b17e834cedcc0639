import { describe, expect, it } from "vitest";
import { silenceCreateSchema } from "./silences";

const base = { alertname: "DedupRedisErrors", service: "billing", durationMinutes: 30, comment: "replaying the DLQ" };

describe("POST /api/silences' body", () => {
  it("takes a printable createdBy; a newline or control character (a forged log line) is a 400 that says so", () => {
    expect(silenceCreateSchema.parse({ ...base, createdBy: "Ana Núñez (on call)" }).createdBy).toBe(
      "Ana Núñez (on call)",
    );
    for (const bad of ["ana\n[audit] ok who=admin", "ana\rb", "a\u0000b", "a\u001bb"]) {
      const r = silenceCreateSchema.safeParse({ ...base, createdBy: bad });
      expect(r.success, JSON.stringify(bad)).toBe(false);
      expect(r.error?.issues[0]?.message).toMatch(/printable/);
    }
  });

  it("caps the duration at 7 days", () => {
    expect(silenceCreateSchema.safeParse({ ...base, durationMinutes: 7 * 24 * 60 + 1 }).success).toBe(false);
  });
});
