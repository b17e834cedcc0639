/** Shape of `GET /api/whoami`: who the app takes the caller for, and what it may do. Isomorphic. */
import { z } from "zod";

const servicesSchema = z.union([z.literal("*"), z.array(z.string())]);

/** Answer of `GET /api/whoami`. */
export const whoamiSchema = z.object({
  /** `AUTH_MODE`: `token` (WORKSHOP_TOKEN / this machine), `proxy` (an auth proxy names the user), `oidc` (sign-in). */
  mode: z.enum(["token", "proxy", "oidc"]),
  /** The user name, or `token` / `local` / `anonymous`. */
  name: z.string(),
  source: z.enum(["token", "local", "proxy", "oidc", "anonymous"]),
  email: z.string().optional(),
  groups: z.array(z.string()),
  grants: z.array(z.object({ role: z.enum(["viewer", "operator", "admin"]), services: servicesSchema })),
  /** The services each permission covers: `*` all, `[]` none. */
  may: z.object({ write: servicesSchema, unmasked: servicesSchema, auditAll: z.boolean() }),
});
/** Answer of `GET /api/whoami`. */
export type Whoami = z.infer<typeof whoamiSchema>;

function grantsText(w: Whoami): string {
  return w.grants.map((g) => `${g.role}: ${g.services === "*" ? "*" : g.services.join(", ")}`).join("; ");
}

/** The header's line: `signed in as alice (operator: billing)`, `anonymous — read only`, `local (admin: *)`. */
export function whoamiText(w: Whoami): string {
  if (w.source === "anonymous") return w.may.write.length === 0 ? "anonymous — read only" : "anonymous";
  if (w.source === "proxy" || w.source === "oidc")
    return `signed in as ${w.name} (${w.grants.length ? grantsText(w) : "no role: read only"})`;
  return `${w.name} (${grantsText(w)})`;
}

/**
 * Why a write button on `service` is disabled for `w` (its title text), or null when it may write
 * there (also while `w` is not known yet, and in token mode, where a token can still be given: the
 * server decides anyway). `service` undefined: an
 * action on the whole app (needs a `*` grant).
 */
export function writeBlockedReason(w: Whoami | undefined, service?: string): string | null {
  // Token mode: the workshop token field turns a refused write into an allowed one; the server decides.
  if (!w || w.mode === "token") return null;
  const ok = w.may.write === "*" || (service !== undefined && w.may.write.includes(service));
  if (ok) return null;
  const need = `needs operator of ${service ?? "every service (*)"}`;
  if (w.source === "anonymous") return `Read only: not signed in; ${need}`;
  return `${w.name} is ${w.grants.length ? grantsText(w) : "without a role"}; this ${need}`;
}
