/**
 * Redis `MONITOR` over a plain socket. ioredis' `monitor()` can fail with "Command queue state
 * error" when the server is busy running scripts as MONITOR starts; reading the stream directly has no such state. Each line is
 * `+<time> [<db> <client>] "arg" "arg" …` with arguments escaped as by Redis' `sdscatrepr`.
 */
import { connect, type Socket } from "node:net";

/** Unescapes one `sdscatrepr` string body (between its quotes). */
export function unrepr(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const n = s[++i];
    if (n === "x") {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else out += ({ n: "\n", r: "\r", t: "\t", a: "\u0007", b: "\b" } as Record<string, string>)[n ?? ""] ?? n ?? "";
  }
  return out;
}

/** The arguments of one MONITOR line, or null for a line that is not a command (the `+OK`). */
export function parseMonitorLine(line: string): string[] | null {
  const start = line.indexOf("] ");
  if (!line.startsWith("+") || start < 0) return null;
  const args: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(line.slice(start + 2)); m; m = re.exec(line.slice(start + 2))) args.push(unrepr(m[1]!));
  return args.length > 0 ? args : null;
}

/** A running MONITOR: `seen` fills as commands arrive; `stop()` closes the socket. */
export interface Monitor {
  /** Every command, including those a Lua script ran (MONITOR shows them as `[<db> lua]`). */
  readonly seen: string[][];
  /** The commands clients sent (round trips and pipelined commands), without those run inside scripts. */
  readonly sent: string[][];
  stop(): void;
}

/** One command in RESP (safe for any bytes in its arguments). */
function resp(...args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a, "latin1")}\r\n${a}\r\n`).join("")}`;
}

/** Starts MONITOR on 127.0.0.1:`port` (after AUTH with `password`) and resolves once the server acknowledged it. */
export function monitor(port: number, password?: string): Promise<Monitor> {
  return new Promise((resolve, reject) => {
    const seen: string[][] = [];
    const sent: string[][] = [];
    const sock: Socket = connect(port, "127.0.0.1");
    let buf = "";
    let ok = false;
    let pendingOks = password ? 2 : 1;
    sock.setEncoding("latin1");
    sock.on("error", (e) => (ok ? undefined : reject(e)));
    sock.on("connect", () => sock.write((password ? resp("AUTH", password) : "") + resp("MONITOR"), "latin1"));
    sock.on("data", (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\r\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        if (!ok) {
          if (line === "+OK") {
            if (--pendingOks > 0) continue;
            ok = true;
            resolve({ seen, sent, stop: () => sock.destroy() });
          } else {
            sock.destroy();
            reject(new Error(`MONITOR answered ${line}`));
          }
          continue;
        }
        const args = parseMonitorLine(line);
        if (!args) continue;
        seen.push(args);
        if (!/^\+\S+ \[\d+ lua\]/.test(line)) sent.push(args);
      }
    });
  });
}
