import { signOutRoute } from "@/server/auth/oidc-routes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `POST /api/auth/logout` (JSON) → `{ signedOut, redirect }`: clears the session cookie; `redirect` is the provider's end-session page or `/`. */
export function POST(req: Request): Promise<Response> {
  return signOutRoute(req);
}
