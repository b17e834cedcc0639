/**
 * `ROLE_BINDINGS`: which role a group has over which services, e.g.
 * `sre=admin:*,billing-devs=operator:billing;payments,*=viewer:*` (`*` as the group: every signed-in
 * user). A user's grants are the union of its groups' bindings; a user no binding names has no
 * role (it reads the pages, it changes nothing). Pure: imports nothing of the app.
 */

/** The three roles, weakest first. */
export const ROLES = ["viewer", "operator", "admin"] as const;
/** One of {@link ROLES}. */
export type Role = (typeof ROLES)[number];

/** A role over some services: `services: "*"` is every service. */
export interface RoleGrant {
  role: Role;
  services: "*" | readonly string[];
}

/** One entry of `ROLE_BINDINGS`: members of `group` (`*`: everyone signed in) have `grant`. */
export interface RoleBinding {
  group: string;
  grant: RoleGrant;
}

const NAME = /^[A-Za-z0-9._@-]{1,128}$/;
const SERVICE = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const FORM =
  "expected group=role:services entries separated by commas, role viewer|operator|admin, services * or names separated by ; (e.g. sre=admin:*,billing-devs=operator:billing;payments)";

/**
 * Parses `ROLE_BINDINGS`. **Throws a `RangeError` naming the bad entry and the expected form**
 * (config.ts turns it into a start-up error naming the variable).
 */
export function parseRoleBindings(text: string): RoleBinding[] {
  const out: RoleBinding[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const m = /^([^=\s]+)\s*=\s*([a-z]+)\s*:\s*(\S+)$/.exec(entry);
    if (!m) throw new RangeError(`entry "${entry.slice(0, 80)}": ${FORM}`);
    const [, group, role, scope] = m as unknown as [string, string, string, string];
    if (group !== "*" && !NAME.test(group))
      throw new RangeError(
        `entry "${entry.slice(0, 80)}": group "${group}" is not a group name (letters, digits, . _ @ -)`,
      );
    if (!(ROLES as readonly string[]).includes(role))
      throw new RangeError(`entry "${entry.slice(0, 80)}": role "${role}" is not one of ${ROLES.join(", ")}`);
    const services =
      scope === "*"
        ? "*"
        : scope
            .split(";")
            .map((s) => s.trim())
            .filter(Boolean);
    if (services !== "*" && (services.length === 0 || !services.every((s) => SERVICE.test(s))))
      throw new RangeError(`entry "${entry.slice(0, 80)}": services "${scope}" — ${FORM}`);
    out.push({ group, grant: { role: role as Role, services } });
  }
  return out;
}

/** The grants of a user in `groups` under `bindings` (empty: no role). */
export function grantsOf(groups: readonly string[], bindings: readonly RoleBinding[]): RoleGrant[] {
  const mine = new Set(groups);
  return bindings.filter((b) => b.group === "*" || mine.has(b.group)).map((b) => b.grant);
}

/** `admin: *`, `operator: billing, payments` — a grant in words, for answers and the header. */
export function grantText(g: RoleGrant): string {
  return `${g.role}: ${g.services === "*" ? "*" : g.services.join(", ")}`;
}
