import { describe, expect, it } from "vitest";
import { whoamiText, writeBlockedReason, type Whoami } from "./whoami";

const base: Whoami = {
  mode: "proxy",
  name: "alice",
  source: "proxy",
  groups: ["billing-devs"],
  grants: [{ role: "operator", services: ["billing"] }],
  may: { write: ["billing"], unmasked: [], auditAll: false },
};
const anonymous: Whoami = {
  ...base,
  name: "anonymous",
  source: "anonymous",
  groups: [],
  grants: [],
  may: { write: [], unmasked: [], auditAll: false },
};

describe("who you are, and why a write button is disabled", () => {
  it("the header names the user and its roles, or says anonymous and read only", () => {
    expect(whoamiText(base)).toBe("signed in as alice (operator: billing)");
    expect(whoamiText({ ...base, grants: [] })).toBe("signed in as alice (no role: read only)");
    expect(whoamiText(anonymous)).toBe("anonymous — read only");
    expect(
      whoamiText({
        ...base,
        mode: "token",
        name: "local",
        source: "local",
        grants: [{ role: "admin", services: "*" }],
        may: { write: "*", unmasked: "*", auditAll: true },
      }),
    ).toBe("local (admin: *)");
  });

  it("a write on a service the user operates is enabled; elsewhere the button says why not", () => {
    expect(writeBlockedReason(base, "billing")).toBeNull();
    expect(writeBlockedReason(base, "payments")).toBe("alice is operator: billing; this needs operator of payments");
    expect(writeBlockedReason(anonymous, "billing")).toBe("Read only: not signed in; needs operator of billing");
    expect(writeBlockedReason({ ...base, may: { ...base.may, write: "*" } }, undefined)).toBeNull();
  });

  it("token mode never disables: the token field can still turn a refusal into a write", () => {
    expect(writeBlockedReason({ ...anonymous, mode: "token" }, "billing")).toBeNull();
    expect(writeBlockedReason(undefined, "billing")).toBeNull();
  });
});
