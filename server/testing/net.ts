/**
 * Process-start helpers shared by the tests, the benches, the e2e harness and the fault suite: a
 * free port to start a server on (or a server started on one), and the wait until a Redis started
 * there answers PING.
 */
import { createServer, type Server } from "node:net";
import { Redis } from "ioredis";

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `server` (TCP or HTTP) listening on a free port of 127.0.0.1; resolves that port. */
export async function listenOnFreePort(server: Server): Promise<number> {
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  return port;
}

/** Stops `server` accepting connections; resolves once the open ones ended too. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((r) => server.close(() => r()));
}

/** Options of {@link waitForRedisPing}. */
export interface WaitForPingOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** Give up at once when this turns false (the server process exited). @default always true */
  alive?: () => boolean;
}

/**
 * Resolves once the Redis at `url` answers PING (a fresh one-shot client every 50 ms); rejects
 * when `timeoutMs` passed or `alive()` turned false. The caller stops the process and says why.
 */
export async function waitForRedisPing(url: string, opts: WaitForPingOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const probe = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      connectTimeout: 300,
      retryStrategy: () => null,
    });
    probe.on("error", () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch {
      probe.disconnect();
      if (opts.alive?.() === false) throw new Error(`the server at ${url} exited before it answered PING`);
      if (Date.now() > deadline) throw new Error(`no PING answer from ${url} within ${opts.timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
