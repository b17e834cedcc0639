import { NextResponse, type NextRequest } from "next/server";

/**
 * Answers 400 `{ error, detail }` for a request path with an invalid percent-encoding (e.g.
 * `/handlers/%/x`, `/api/workshop/runs/%`). Next.js 16 would try to render a `/_error` page that an
 * App-Router-only build does not have, and answer a bare 500 instead.
 */
export function proxy(req: NextRequest): NextResponse {
  const raw = new URL(req.url).pathname;
  if (raw.includes("%")) {
    for (const segment of raw.split("/")) {
      try {
        decodeURIComponent(segment);
      } catch {
        return NextResponse.json(
          { error: "bad_request", detail: "the request path has an invalid percent-encoding" },
          { status: 400, headers: { "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store" } },
        );
      }
    }
  }
  return NextResponse.next();
}

export const config = {
  // Everything but the build's static assets.
  matcher: ["/((?!_next/static|_next/image).*)"],
};
