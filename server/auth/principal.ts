/**
 * Who a request is, and what that one may do: the one answer every route, the audit trail and the
 * payload masking ask. `AUTH_MODE` decides where the user comes from (token: today's rule of
 * server/access.ts; proxy: headers from `TRUSTED_PROXIES`, ./proxy-identity.ts; oidc: the session
 * cookie of a sign-in, ./oidc-session.ts); `ROLE_BINDINGS` (./bindings.ts) gives proxy and OIDC
 * users their roles per service.
 */
import { checkAccess, clientAddress, listenInfo } from "@/server/access";
import { config, type AppConfig } from "@/server/config";
import { grantsOf, grantText, type Role, type RoleGrant } from "./bindings";
import { oidcSessionUser } from "./oidc-session";
import { proxyIdentity } from "./proxy-identity";

export type { Role, RoleGrant } from "./bindings";

/** The user behind a request as the configured mode established it. */
export interface Principal {
  /** How the request proved who it is; `anonymous`: it did not. */
  source: "token" | "local" | "proxy" | "oidc" | "anonymous";
  /** The user name (proxy/oidc), or the source's word (`token`, `local`, `anonymous`). */
  name: string;
  email?: string;
  groups: readonly string[];
  grants: readonly RoleGrant[];
  /** The client's address as far as the request proves it (null: unknown). */
  address: string | null;
}

/** What a principal asks to do. `write`: forget, TTL, re-drive, discard, silence, demo and workshop actions. */
export type Permission = "read" | "write" | "unmasked" | "audit-all";

const ADMIN_EVERYWHERE: readonly RoleGrant[] = [{ role: "admin", services: "*" }];
const VIEWER_EVERYWHERE: readonly RoleGrant[] = [{ role: "viewer", services: "*" }];

/** A user a proxy or a sign-in named, with the grants `ROLE_BINDINGS` gives its groups. */
function userPrincipal(
  source: "proxy" | "oidc",
  u: { name: string; email?: string; groups: readonly string[] },
  c: AppConfig,
  address: string | null,
): Principal {
  return {
    source,
    name: u.name,
    ...(u.email ? { email: u.email } : {}),
    groups: u.groups,
    grants: grantsOf(u.groups, c.ROLE_BINDINGS),
    address,
  };
}

/**
 * The principal of a request under `AUTH_MODE`:
 * - `token` (today's rule): a valid `WORKSHOP_TOKEN`, or a local request when no token is set, is
 *   an admin everywhere; anyone else is anonymous and reads (viewer everywhere);
 * - `proxy`: the user the trusted proxy names (./proxy-identity.ts), else anonymous with no role;
 * - `oidc`: the user of the session cookie (./oidc-session.ts), else anonymous with no role.
 * In proxy and oidc mode neither the token nor a local request makes anyone an admin.
 */
export async function principalOf(req: Request): Promise<Principal> {
  const c = config();
  const address = clientAddress(req.headers, c.TRUSTED_PROXIES, c.TRUSTED_PROXY_HEADER);
  const anonymous = (grants: readonly RoleGrant[]): Principal => ({
    source: "anonymous",
    name: "anonymous",
    groups: [],
    grants,
    address,
  });
  if (c.AUTH_MODE === "proxy") {
    const u = proxyIdentity(req.headers, c);
    return u ? userPrincipal("proxy", u, c, address) : anonymous([]);
  }
  if (c.AUTH_MODE === "oidc") {
    const u = await oidcSessionUser(req);
    return u ? userPrincipal("oidc", u, c, address) : anonymous([]);
  }
  const d = checkAccess(req.headers, c, listenInfo());
  if (d.ok) return { source: d.reason, name: d.reason, groups: [], grants: ADMIN_EVERYWHERE, address };
  return anonymous(VIEWER_EVERYWHERE);
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
const NEEDS: Record<Permission, Role> = { read: "viewer", write: "operator", unmasked: "admin", "audit-all": "admin" };

/** Whether `p` may do `what` on `service` (undefined: the whole app, so only a `*` grant counts). */
export function may(p: Principal, what: Permission, service?: string): boolean {
  return p.grants.some(
    (g) =>
      RANK[g.role] >= RANK[NEEDS[what]] &&
      (g.services === "*" || (service !== undefined && g.services.includes(service))),
  );
}

/** The role a permission needs (`write` → `operator`), for refusals. */
export function roleNeeded(what: Permission): Role {
  return NEEDS[what];
}

/** The services `p` may do `what` on: `"*"` for all, else the list (empty: none). */
export function servicesFor(p: Principal, what: Permission): "*" | string[] {
  const ok = p.grants.filter((g) => RANK[g.role] >= RANK[NEEDS[what]]);
  if (ok.some((g) => g.services === "*")) return "*";
  return [...new Set(ok.flatMap((g) => g.services as readonly string[]))].sort();
}

/** `operator: billing; viewer: *`, or `no role` — the principal's grants in words. */
export function rolesText(p: Principal): string {
  return p.grants.length === 0 ? "no role" : p.grants.map(grantText).join("; ");
}

/** The strongest role `p` has anywhere (null: none), for the audit entry's `role`. */
export function topRole(p: Principal): Role | null {
  let best: Role | null = null;
  for (const g of p.grants) if (best === null || RANK[g.role] > RANK[best]) best = g.role;
  return best;
}

/**
 * Why `p` may not do `action` on `service` (the 403's detail): `alice is viewer: *; keys.forget on
 * billing needs operator`. `service` undefined: the whole app.
 */
export function refusalText(
  p: Principal,
  action: string,
  service: string | undefined,
  what: Permission = "write",
): string {
  const who = p.source === "anonymous" ? "anonymous (not signed in)" : p.name;
  const roles = p.grants.length === 0 ? "has no role" : `is ${rolesText(p)}`;
  return `${who} ${roles}; ${action} on ${service ?? "the whole app"} needs ${NEEDS[what]}${service === undefined ? " of *" : ""}`;
}
