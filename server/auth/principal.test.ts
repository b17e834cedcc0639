import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "@/server/config";
import { grantsOf, parseRoleBindings } from "./bindings";
import { may, principalOf, refusalText, servicesFor } from "./principal";
import { untrustedIdentityCounter } from "./proxy-identity";

type G = typeof globalThis & { __dedupHealthConfig?: unknown };
const g = globalThis as G;
const saved = g.__dedupHealthConfig;
const argv = process.argv;
afterEach(() => {
  g.__dedupHealthConfig = saved;
  process.argv = argv;
});

const PROXY = {
  AUTH_MODE: "proxy",
  TRUSTED_PROXIES: "10.0.0.2",
  ROLE_BINDINGS: "sre=admin:*,billing-devs=operator:billing;payments,*=viewer:*",
};
const req = (headers: Record<string, string>) =>
  new Request("http://dash.example.com/api/x", { method: "POST", headers: { host: "dash.example.com", ...headers } });
const alice = {
  "x-forwarded-user": "alice",
  "x-forwarded-email": "alice@example.com",
  "x-forwarded-groups": "billing-devs, readers",
};

describe("ROLE_BINDINGS", () => {
  it("maps groups to roles per service; a user's grants are the union of its groups'", () => {
    const b = parseRoleBindings("sre=admin:*, billing-devs=operator:billing;payments");
    expect(grantsOf(["billing-devs"], b)).toEqual([{ role: "operator", services: ["billing", "payments"] }]);
    expect(grantsOf(["sre", "billing-devs"], b)).toHaveLength(2);
    expect(grantsOf(["nobody"], b)).toEqual([]);
  });

  it("bad input stops start-up with an error naming ROLE_BINDINGS and the entry", () => {
    for (const bad of ["sre=root:*", "sre", "sre=admin:", "sre=admin:Billing Team", "a b=viewer:*"]) {
      expect(() => parseConfig({ ROLE_BINDINGS: bad }), bad).toThrow(/ROLE_BINDINGS/);
    }
    expect(() => parseConfig({ ROLE_BINDINGS: "sre=root:*" })).toThrow(
      /role "root" is not one of viewer, operator, admin/,
    );
    expect(() => parseConfig({ AUTH_MODE: "ldap" })).toThrow(/AUTH_MODE/);
    expect(() => parseConfig({ AUTH_MODE: "proxy" })).toThrow(/TRUSTED_PROXIES — required with AUTH_MODE=proxy/);
  });
});

describe("proxy mode", () => {
  it("believes the user headers from a trusted proxy: name, e-mail, groups, roles per service", async () => {
    g.__dedupHealthConfig = parseConfig(PROXY);
    const p = await principalOf(req({ ...alice, "x-forwarded-for": "198.51.100.7, 10.0.0.2" }));
    expect(p).toMatchObject({
      source: "proxy",
      name: "alice",
      email: "alice@example.com",
      groups: ["billing-devs", "readers"],
      address: "198.51.100.7",
    });
    expect(may(p, "write", "billing")).toBe(true);
    expect(may(p, "write", "notification")).toBe(false);
    expect(may(p, "read", "notification")).toBe(true);
    expect(may(p, "unmasked", "billing")).toBe(false);
    expect(may(p, "audit-all")).toBe(false);
    expect(servicesFor(p, "write")).toEqual(["billing", "payments"]);
    expect(refusalText(p, "keys.forget", "notification")).toBe(
      "alice is operator: billing, payments; viewer: *; keys.forget on notification needs operator",
    );
  });

  it("the same headers from an untrusted peer are ignored (anonymous, no role) and counted", async () => {
    g.__dedupHealthConfig = parseConfig(PROXY);
    const before = (await untrustedIdentityCounter().get()).values[0]?.value ?? 0;
    for (const xff of ["198.51.100.7", "10.0.0.2, 198.51.100.7", "127.0.0.1"]) {
      const p = await principalOf(req({ ...alice, "x-forwarded-for": xff, "x-real-ip": "10.0.0.2" }));
      expect(p, xff).toMatchObject({ source: "anonymous", name: "anonymous", grants: [] });
      expect(may(p, "write", "billing")).toBe(false);
    }
    expect((await untrustedIdentityCounter().get()).values[0]?.value).toBe(before + 3);
  });

  it("a trusted request without a user is anonymous; control characters in the name are dropped", async () => {
    g.__dedupHealthConfig = parseConfig(PROXY);
    expect(await principalOf(req({ "x-forwarded-for": "10.0.0.2", "x-forwarded-groups": "sre" }))).toMatchObject({
      source: "anonymous",
      grants: [],
    });
    const p = await principalOf(
      req({ "x-forwarded-for": "10.0.0.2", "x-forwarded-user": "eve\u0007admin", "x-forwarded-groups": "sre" }),
    );
    expect(p.name).toBe("eveadmin");
    expect(may(p, "write", "anything")).toBe(true);
  });

  it("neither a local request nor the workshop token makes anyone an admin", async () => {
    process.argv = ["node", "next", "start", "-H", "127.0.0.1"];
    const token = "a-workshop-token-of-16+";
    g.__dedupHealthConfig = parseConfig({ ...PROXY, WORKSHOP_TOKEN: token });
    const p = await principalOf(
      new Request("http://localhost:3000/api/x", {
        headers: { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", authorization: `Bearer ${token}` },
      }),
    );
    expect(p).toMatchObject({ source: "anonymous", grants: [] });
  });
});

describe("token mode (the default) keeps today's rule", () => {
  it("a local request is admin everywhere named local; anyone else reads, named anonymous", async () => {
    process.argv = ["node", "next", "start", "-H", "127.0.0.1"];
    g.__dedupHealthConfig = parseConfig({});
    const local = await principalOf(
      new Request("http://localhost:3000/api/x", {
        headers: { host: "localhost:3000", "x-forwarded-for": "127.0.0.1" },
      }),
    );
    expect(local).toMatchObject({ source: "local", name: "local", address: "127.0.0.1" });
    expect(may(local, "write", "billing") && may(local, "audit-all")).toBe(true);
    // The user headers mean nothing in token mode.
    const other = await principalOf(req({ ...alice, "x-forwarded-for": "198.51.100.7" }));
    expect(other).toMatchObject({ source: "anonymous", grants: [{ role: "viewer", services: "*" }] });
    expect(may(other, "write", "billing")).toBe(false);
  });
});
