import { ROUTER_STATE_REFUSED_DETAIL } from "@/lib/router-state-pattern";
import { json } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Where next.config.js' rewrites send a page request whose `Next-Router-State-Tree` header Next's
 * renderer would fail to parse (not the URI-encoded router state tree its client sends, checked by
 * lib/router-state-pattern.js, or longer than its 40,000-character bound): 400 `{ error, detail }`
 * instead of the renderer's plain 500 on every page. An empty header, which a rewrite's `has` cannot
 * match, is refused by proxy.ts with the same answer.
 */
function refused(): Response {
  return json(
    {
      error: "bad_request",
      detail: ROUTER_STATE_REFUSED_DETAIL,
    },
    400,
  );
}

export const GET = refused;
export const HEAD = refused;
