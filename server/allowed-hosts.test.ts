import { describe, expect, it } from "vitest";
import { allowList, hostAllowed, hostRefusal, normalHost } from "./allowed-hosts";

const MACHINE = () => ["box", "192.168.1.7", "[fd00::7]"];

describe("Host allow-list (DNS rebinding)", () => {
  it("bound to loopback: loopback names only, any port; the machine's own names are not needed", () => {
    const l = allowList("127.0.0.1", [], MACHINE);
    for (const h of ["localhost", "localhost:3000", "127.0.0.1:1", "[::1]:3000", "LOCALHOST.:3000"])
      expect(hostAllowed(h, l), h).toBe(true);
    for (const h of [
      "evil.example:3000",
      "box:3000",
      "192.168.1.7:3000",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "",
      "[::2]",
    ])
      expect(hostAllowed(h, l), h).toBe(false);
    expect(hostAllowed(null, l)).toBe(false);
  });

  it("bound beyond loopback: also the bind address, this machine's host name and addresses", () => {
    for (const bind of [null, "0.0.0.0", "::"]) {
      const l = allowList(bind, [], MACHINE);
      for (const h of ["localhost:3000", "box:3000", "192.168.1.7:3000", "[fd00::7]:3000"])
        expect(hostAllowed(h, l), `${bind} ${h}`).toBe(true);
      expect(hostAllowed("evil.example", l)).toBe(false);
      expect(hostAllowed("0.0.0.0:3000", l)).toBe(false);
    }
    expect(hostAllowed("10.1.2.3:3000", allowList("10.1.2.3", [], MACHINE))).toBe(true);
  });

  it("ALLOWED_HOSTS adds names; a leading dot allows sub-domains", () => {
    const l = allowList("127.0.0.1", ["dash.example.com", ".corp.example", "[fd00::9]"], MACHINE);
    for (const h of ["dash.example.com", "DASH.example.com:443", "corp.example", "a.b.corp.example:80", "[fd00::9]:1"])
      expect(hostAllowed(h, l), h).toBe(true);
    for (const h of ["example.com", "xdash.example.com", "evilcorp.example", "corp.example.evil"])
      expect(hostAllowed(h, l), h).toBe(false);
  });

  it("says why in the refusal, without echoing the Host", () => {
    const l = allowList("127.0.0.1", [], MACHINE);
    expect(hostRefusal("evil.example", l)).toMatch(/ALLOWED_HOSTS/);
    expect(hostRefusal("evil.example", l)).not.toContain("evil");
    expect(hostRefusal(null, l)).toMatch(/no Host/);
    expect(hostRefusal("localhost:1", l)).toBeNull();
    expect(normalHost("::1")).toBe("[::1]");
  });
});
