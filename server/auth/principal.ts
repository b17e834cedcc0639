/**
 * Who a request is, and what that one may do: the one answer every route, the audit trail and the
 * payload masking ask. `AUTH_MODE` decides where the user comes from (token: today's rule of
 * server/access.ts; proxy: headers from `TRUSTED_PROXIES`; oidc: the session cookie of a sign-in).
 */
import { checkAccess, listenInfo } from "@/server/access";
import { config } from "@/server/config";

/** The three roles, weakest first. */
export type Role = "viewer" | "operator" | "admin";

/** A role over some services: `services: "*"` is every service. */
export interface RoleGrant {
  role: Role;
  services: "*" | readonly string[];
}

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

/**
 * The principal of a request in `token` mode (today's rule): a valid `WORKSHOP_TOKEN`, or a local
 * request when no token is set, is an admin everywhere; anyone else reads.
 */
export async function principalOf(req: Request): Promise<Principal> {
  const d = checkAccess(req.headers, config(), listenInfo());
  if (d.ok) return { source: d.reason, name: d.reason, groups: [], grants: ADMIN_EVERYWHERE, address: null };
  return { source: "anonymous", name: "anonymous", groups: [], grants: VIEWER_EVERYWHERE, address: null };
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
const NEEDS: Record<Permission, Role> = { read: "viewer", write: "operator", unmasked: "admin", "audit-all": "admin" };

/** Whether `p` may do `what` on `service` (undefined: the whole app, so only a `*` grant counts). */
export function may(p: Principal, what: Permission, service?: string): boolean {
  return p.grants.some((g) => RANK[g.role] >= RANK[NEEDS[what]] && (g.services === "*" || (service !== undefined && g.services.includes(service))));
}
