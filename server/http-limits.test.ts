import { createServer, type RequestListener, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { applyHttpLimits, type HttpLimitsOptions } from "./http-limits";
import { slowClient } from "./testing/slow-client";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

/** Starts the file's server with `handler` on a free port of 127.0.0.1, applies `limits`, and resolves with its URL. */
async function serve(handler: RequestListener, limits: HttpLimitsOptions): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  applyHttpLimits(server, limits);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** ms until the server at `url` closed a connection that sent `head`, then one byte of `trickle` every 100 ms; null if open after 3 s. */
const slow = (url: string, head: string, trickle: string) =>
  slowClient(url, { head, trickle, everyMs: 100, maxMs: 3000 });

describe("applyHttpLimits", () => {
  it("cuts slow headers, slow bodies and silent connections at their deadlines; answers normal requests", async () => {
    const url = await serve(
      (req, res) => {
        req.resume();
        req.on("end", () => res.end("ok"));
      },
      { headersTimeoutMs: 500, bodyTimeoutMs: 700, maxConnections: 50 },
    );
    const [headers, body, silent] = await Promise.all([
      slow(url, "GET / HTTP/1.1\r\nHost: x\r\n", "X-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
      slow(url, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", "a".repeat(40)),
      slow(url, "", ""),
    ]);
    // null (never cut) fails as Infinity.
    expect(headers ?? Infinity, "slow headers").toBeLessThan(1200);
    expect(body ?? Infinity, "slow body").toBeLessThan(1400);
    expect(silent ?? Infinity, "silent connection").toBeLessThan(1200);
    const res = await fetch(`${url}/`);
    expect(await res.text()).toBe("ok");
  });

  it("closes connections beyond the cap at once", async () => {
    const url = await serve((_req, res) => res.end("ok"), {
      headersTimeoutMs: 5000,
      bodyTimeoutMs: 5000,
      maxConnections: 5,
    });
    // 12 silent connections: the server closes those beyond its 5 within half a second.
    const closed = await Promise.all(
      Array.from({ length: 12 }, () => slowClient(url, { head: "", trickle: "", everyMs: 1000, maxMs: 500 })),
    );
    expect(closed.filter((ms) => ms !== null).length).toBeGreaterThanOrEqual(7);
  });
});

describe("applyHttpLimits and slow answers", () => {
  it("answers a GET whose response takes longer than the body deadline (the body deadline is for bodies only)", async () => {
    // The handler never reads the (empty) request body, as Next does not for a GET.
    const url = await serve((_req, res) => void setTimeout(() => res.end("late"), 1200), {
      headersTimeoutMs: 500,
      bodyTimeoutMs: 700,
      maxConnections: 50,
    });
    const res = await fetch(`${url}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("late");
  });
});
