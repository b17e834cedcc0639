import { json } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Where next.config.js' rewrites send a page request whose `Next-Router-State-Tree` header Next's
 * renderer would fail to parse (not the URI-encoded router state tree its client sends, checked by
 * lib/router-state-pattern.js, or longer than its 40,000-character bound): 400 `{ error, detail }`
 * instead of the renderer's plain 500 on every page. proxy.ts cannot check it: Next hides the client
 * router's headers from it.
 */
function refused(): Response {
  return json(
    {
      error: "bad_request",
      detail:
        "the Next-Router-State-Tree header is not a router state (the URI-encoded JSON of a router state tree, at most 8 levels deep and 40000 characters); the app's own client router sends one",
    },
    400,
  );
}

export const GET = refused;
export const HEAD = refused;
