import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { applyHttpLimits } from "./http-limits";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

/** ms until the server closed a connection that sent `head` and then one byte of `trickle` every 100 ms; null if open after 3 s. */
function slow(port: number, head: string, trickle: string): Promise<number | null> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = connect(port, "127.0.0.1", () => head && s.write(head));
    let i = 0;
    const drip = setInterval(() => i < trickle.length && s.write(trickle[i++]!), 100);
    const stop = (v: number | null) => {
      clearInterval(drip);
      clearTimeout(limit);
      s.destroy();
      resolve(v);
    };
    const limit = setTimeout(() => stop(null), 3000);
    s.on("close", () => stop(Date.now() - t0));
    s.on("error", () => undefined);
  });
}

describe("applyHttpLimits", () => {
  it("cuts slow headers, slow bodies and silent connections at their deadlines; answers normal requests", async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    applyHttpLimits(server, { headersTimeoutMs: 500, bodyTimeoutMs: 700, maxConnections: 50 });
    const [headers, body, silent] = await Promise.all([
      slow(port, "GET / HTTP/1.1\r\nHost: x\r\n", "X-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
      slow(port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", "a".repeat(40)),
      slow(port, "", ""),
    ]);
    expect(headers).not.toBeNull();
    expect(headers!).toBeLessThan(1200);
    expect(body).not.toBeNull();
    expect(body!).toBeLessThan(1400);
    expect(silent).not.toBeNull();
    expect(silent!).toBeLessThan(1200);
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(await res.text()).toBe("ok");
  });

  it("closes connections beyond the cap at once", async () => {
    server = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    applyHttpLimits(server, { headersTimeoutMs: 5000, bodyTimeoutMs: 5000, maxConnections: 5 });
    const closed = await Promise.all(
      Array.from({ length: 12 }, () => new Promise<boolean>((resolve) => {
        const s = connect(port, "127.0.0.1");
        const t = setTimeout(() => { s.destroy(); resolve(false); }, 500);
        s.on("close", () => { clearTimeout(t); resolve(true); });
        s.on("error", () => undefined);
      })),
    );
    expect(closed.filter(Boolean).length).toBeGreaterThanOrEqual(7);
  });
});

describe("applyHttpLimits and slow answers", () => {
  it("answers a GET whose response takes longer than the body deadline (the body deadline is for bodies only)", async () => {
    // The handler never reads the (empty) request body, as Next does not for a GET.
    server = createServer((_req, res) => void setTimeout(() => res.end("late"), 1200));
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    applyHttpLimits(server, { headersTimeoutMs: 500, bodyTimeoutMs: 700, maxConnections: 50 });
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("late");
  });
});
