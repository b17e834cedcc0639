import { signInRoute } from "@/server/auth/oidc-routes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/auth/login?returnTo=/path` (AUTH_MODE=oidc): 302 to the OpenID Provider's sign-in, code + PKCE. */
export function GET(req: Request): Promise<Response> {
  return signInRoute(req);
}
