/** One fuzz request: drawn at random, sent, and its answer (or its absence) counted in the report. */
import type { FuzzReport } from "./report";
import { chance, pick } from "./random";
import { body, decodable, enc, fillPath, query } from "./request-parts";
import type { Route } from "./routes";
import { TRAVERSAL } from "./values";

/** Where and what a run sends, and what an answer must not contain. */
export interface FuzzTarget {
  base: string;
  routes: Route[];
  forbidden: string[];
  /** The app's request body limit: a larger body is refused by its Content-Length. */
  bodyLimitBytes: number;
}

/** A drawn request. */
interface Drawn {
  method: string;
  url: string;
  path: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

const OTHER_METHODS = ["DELETE", "PATCH", "POST", "PUT", "OPTIONS", "HEAD"];

/** Draws a route, a method (mostly one it exports), a filled path, a query, a body and headers. */
function draw(target: FuzzTarget, rep: FuzzReport): Drawn {
  const route = pick(target.routes);
  const method = chance(0.15) ? pick(OTHER_METHODS) : pick(route.methods.length ? route.methods : ["GET"]);
  let path = fillPath(route.template);
  if (chance(0.05)) path += `/${enc(pick(TRAVERSAL))}`;
  const url = `${target.base}${path}${query()}`;
  const headers: Record<string, string> = {};
  let payload: string | undefined;
  if (method === "POST" || method === "PUT" || method === "PATCH") {
    const b = body();
    payload = b.body;
    if (b.contentType) headers["content-type"] = b.contentType;
  }
  if (chance(0.05))
    headers.accept = pick(["text/x-component", "*/*", "application/json", "\u0000"]).replace(/\u0000/g, "");
  if (chance(0.03)) headers.rsc = "1";
  const key = `${method} ${route.template}`;
  rep.byRoute[key] = (rep.byRoute[key] ?? 0) + 1;
  return { method, url, path, headers, payload };
}

const send = (d: Drawn) =>
  fetch(d.url, {
    method: d.method,
    headers: d.headers,
    body: d.payload,
    redirect: "manual",
    signal: AbortSignal.timeout(15_000),
  });

/** A 5xx: counted by kind, the first 200 kept with the status of the same request sent again at once. */
async function recordServerError(d: Drawn, status: number, text: string, rep: FuzzReport): Promise<void> {
  const malformedPath = !decodable(d.path);
  if (malformedPath) rep.serverErrorsMalformedPath++;
  else rep.serverErrorsOther++;
  if (rep.serverErrors.length >= 200) return;
  const again = await send(d).then(
    (r) => r.status,
    (e: Error) => e.message,
  );
  const { method, headers } = d;
  rep.serverErrors.push({
    method,
    url: d.url.slice(0, 300),
    headers,
    status,
    body: text.slice(0, 300),
    malformedPath,
    again,
  });
}

/** A request that got no answer: counted apart when the client refused it or the server refused its size. */
function recordFailure(d: Drawn, e: unknown, bodyLimitBytes: number, rep: FuzzReport): void {
  const { method, url, payload } = d;
  const msg = (e as Error).message;
  // fetch itself refuses some URLs (invalid characters): not a server answer, not counted.
  if (e instanceof TypeError && /Invalid URL|invalid|Failed to parse/i.test(msg) && !/fetch failed/i.test(msg)) {
    rep.byStatus.client_rejected = (rep.byStatus.client_rejected ?? 0) + 1;
    return;
  }
  const code = (e as { cause?: { code?: string } }).cause?.code ?? "";
  // The server answered with headers larger than undici accepts (a redirect echoing a huge URL).
  if (code === "UND_ERR_HEADERS_OVERFLOW") {
    rep.byStatus.headers_overflow = (rep.byStatus.headers_overflow ?? 0) + 1;
    return;
  }
  // A body above the app's limit is refused by its Content-Length (413) without being read; the
  // server may then close the connection while the client is still sending (RFC 9110 §15.5.14),
  // which the client sees as a reset. Counted apart, not as "no answer".
  if (
    (code === "ECONNRESET" || code === "EPIPE") &&
    payload !== undefined &&
    Buffer.byteLength(payload) > bodyLimitBytes
  ) {
    rep.byStatus.refused_by_close = (rep.byStatus.refused_by_close ?? 0) + 1;
    return;
  }
  rep.byStatus.no_answer = (rep.byStatus.no_answer ?? 0) + 1;
  if (rep.noAnswer.length < 50) rep.noAnswer.push({ method, url: url.slice(0, 300), error: `${msg} ${code}` });
}

/** Draws one request, sends it and counts what came back in `rep`. */
export async function fuzzOne(target: FuzzTarget, rep: FuzzReport): Promise<void> {
  const d = draw(target, rep);
  try {
    const res = await send(d);
    const text = d.method === "HEAD" ? "" : await res.text();
    rep.byStatus[res.status] = (rep.byStatus[res.status] ?? 0) + 1;
    if (res.status >= 500) await recordServerError(d, res.status, text, rep);
    for (const f of target.forbidden)
      if (text.includes(f) && rep.leaks.length < 50)
        rep.leaks.push({ method: d.method, url: d.url.slice(0, 300), found: f });
  } catch (e) {
    recordFailure(d, e, target.bodyLimitBytes, rep);
  }
}
