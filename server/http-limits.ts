/**
 * Limits on the HTTP server itself: a deadline to receive a request's headers, one to receive its
 * body, and a cap on open connections. `next start` sets none of them (only `--keepAliveTimeout`):
 * Node's defaults let a client hold a connection for 300 s by sending a byte now and then, and
 * accept connections until the process runs out of file descriptors.
 *
 * Next.js 16 does not hand its `http.Server` to the app, and the project runs `next start` rather
 * than a custom server (the e2e harness, the Docker image and `npm start` all do), so at start-up
 * (instrumentation.ts → server/startup.ts) the server is found among the process's active handles
 * — the one listening `http.Server` — and the limits are attached to it with public APIs only:
 * `server.maxConnections`, and per-connection timers driven by its `connection` and `request`
 * events. Node's own `headersTimeout`/`requestTimeout` are set too, as a second line (Node checks
 * them only every 30 s on a server created without `connectionsCheckingInterval`).
 */
import { Server, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Options of {@link applyHttpLimits}. */
export interface HttpLimitsOptions {
  /** Time from a connection (or the end of the previous answer on it) to a request's complete headers. @default 10_000 */
  headersTimeoutMs: number;
  /** Time from a request's headers to the end of its body. @default 20_000 */
  bodyTimeoutMs: number;
  /** Connections open at once; the server closes further ones at once. @default 256 */
  maxConnections: number;
}

/** Defaults of {@link HttpLimitsOptions}. */
export const DEFAULT_HTTP_LIMITS: HttpLimitsOptions = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 20_000,
  maxConnections: 256,
};

const WAITING = Symbol("dedupHealthHeadersDeadline");
type TimedSocket = Socket & { [WAITING]?: NodeJS.Timeout };

/** Closes `socket` unless a request's headers arrive within `ms`. */
function awaitHeaders(socket: TimedSocket, ms: number): void {
  clearTimeout(socket[WAITING]);
  socket[WAITING] = setTimeout(() => socket.destroy(), ms).unref();
}

/**
 * Attaches the limits to `server` (idempotent per server). **Hazard**: a deadline destroys the
 * socket, so a client that is still sending gets a reset, not an answer — what a slow-loris client
 * deserves and a real client at these sizes (bodies ≤ 16 KiB) never meets.
 */
export function applyHttpLimits(server: Server, opts: Partial<HttpLimitsOptions> = {}): HttpLimitsOptions {
  const o = { ...DEFAULT_HTTP_LIMITS, ...opts };
  const s = server as Server & { __dedupHealthLimits?: HttpLimitsOptions };
  if (s.__dedupHealthLimits) return s.__dedupHealthLimits;
  s.__dedupHealthLimits = o;
  server.maxConnections = o.maxConnections;
  server.headersTimeout = o.headersTimeoutMs;
  server.requestTimeout = o.headersTimeoutMs + o.bodyTimeoutMs;
  // Connections already open (the start-up health check's) get their deadline too.
  server.on("connection", (socket: TimedSocket) => {
    awaitHeaders(socket, o.headersTimeoutMs);
    socket.once("close", () => clearTimeout(socket[WAITING]));
  });
  // An upgraded connection (the dev server's HMR WebSocket) is no longer an HTTP request.
  server.on("upgrade", (_req: IncomingMessage, socket: TimedSocket) => clearTimeout(socket[WAITING]));
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as TimedSocket;
    clearTimeout(socket[WAITING]);
    // Only a request that announces a body waits for one: a GET is not complete when "request" fires
    // (its end is parsed just after) and nobody reads its empty body, so a deadline on it killed
    // answers slower than bodyTimeoutMs (a dev compile of 20 s).
    const announcesBody =
      req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (announcesBody && !req.complete) {
      const body = setTimeout(() => socket.destroy(), o.bodyTimeoutMs).unref();
      const done = () => clearTimeout(body);
      req.once("end", done);
      req.once("close", done);
      res.once("finish", done);
    }
    // The next request on a kept-alive connection has its own headers deadline.
    res.once("finish", () => {
      if (!socket.destroyed) awaitHeaders(socket, o.headersTimeoutMs);
    });
  });
  return o;
}

/**
 * The process's listening `http.Server` (the one `next start` created), or `null` when there is none
 * in this process. Uses `process._getActiveHandles()`: Node's list of live handles, the only way to
 * reach a server the framework does not expose.
 */
export function findListeningServer(): Server | null {
  const handles = (process as NodeJS.Process & { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
  return (handles.find((h) => h instanceof Server && h.listening) as Server | undefined) ?? null;
}
