import { sessionRoute } from "@/server/auth/oidc-routes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/auth/session` → `{ signIn, user }`: whether sign-in is on (AUTH_MODE=oidc) and who is signed in. */
export function GET(req: Request): Promise<Response> {
  return sessionRoute(req);
}
