/**
 * A client that trickles: what a server's slow-client limits (`server/http-limits.ts`) are tested
 * with, on a bare server (unit) and on the built app (e2e).
 */
import { connect } from "node:net";

/**
 * A slow client: connects, writes `head`, then one character of `trickle` every `everyMs` (and
 * nothing more once it is spent). Resolves with the ms until the server closed the connection, or
 * `null` when it was still open after `maxMs` (then this side closes it).
 */
export function slowClient(
  url: string,
  o: { head: string; trickle: string; everyMs: number; maxMs: number },
): Promise<number | null> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = connect(Number(u.port), u.hostname);
    let i = 0;
    let done = false;
    const finish = (v: number | null) => {
      if (done) return;
      done = true;
      clearInterval(drip);
      clearTimeout(limit);
      s.destroy();
      resolve(v);
    };
    const drip = setInterval(() => {
      if (i < o.trickle.length && s.writable) s.write(o.trickle[i++]!);
    }, o.everyMs);
    const limit = setTimeout(() => finish(null), o.maxMs);
    s.on("connect", () => o.head && s.write(o.head));
    s.on("data", () => undefined);
    s.on("error", () => finish(Date.now() - t0));
    s.on("close", () => finish(Date.now() - t0));
  });
}
