import { callbackRoute } from "@/server/auth/oidc-routes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/auth/callback?code&state` (AUTH_MODE=oidc): completes sign-in, sets the signed session cookie, 302 back. */
export function GET(req: Request): Promise<Response> {
  return callbackRoute(req);
}
