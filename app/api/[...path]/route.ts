import { json } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Any `/api/...` path no route serves: 404 `{ error, detail }` in JSON, as every API answer is
 * (Next.js would answer its HTML not-found page). A path a route does serve, with a method it does
 * not take, stays that route's 405.
 */
function notFound(): Response {
  return json({ error: "not_found", detail: "no API endpoint at this path; see README.md for the endpoints" }, 404);
}

export const GET = notFound;
export const HEAD = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
export const OPTIONS = notFound;
