/**
 * The signed-in user of a request in `AUTH_MODE=oidc`: the session cookie the sign-in callback set
 * (server/auth/oidc-cookie.ts), checked against `SESSION_SECRET` and its expiry. A forged, expired
 * or absent cookie is no user (the principal is then anonymous).
 */
import { config } from "@/server/config";
import { cookieOf, readSession, SESSION_COOKIE, type SessionUser } from "@/server/auth/oidc-cookie";

/** The user of `req`'s session cookie, or null when there is none or it is forged or expired. */
export async function oidcSessionUser(req: Request): Promise<SessionUser | null> {
  const secret = config().SESSION_SECRET;
  if (!secret) return null;
  const s = readSession(cookieOf(req.headers.get("cookie"), SESSION_COOKIE), secret, Math.floor(Date.now() / 1000));
  if (!s) return null;
  return { name: s.name, groups: s.groups, ...(s.email !== undefined ? { email: s.email } : {}) };
}
