import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "./net";
import { startOwnServer } from "./own-server";

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A node process serving 200 on `port` after `delayMs`. */
const httpServer = (port: number, delayMs: number) => [
  "-e",
  `setTimeout(() => require("node:http").createServer((q, r) => r.end("ok")).listen(${port}, "127.0.0.1"), ${delayMs})`,
];

describe("startOwnServer", () => {
  it("returns once the ready URL answers, and stop ends the process by its pid and removes its directory", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "own-server-"));
    const s = await startOwnServer(process.execPath, httpServer(port, 300), `http://127.0.0.1:${port}/`, {
      install: "node",
      dir,
    });
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    expect(running(s.pid)).toBe(true);
    await s.stop();
    expect(running(s.pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  }, 30_000);

  it("a server that never answers is stopped and the error says it was not ready", async () => {
    const port = await freePort();
    const start = startOwnServer(process.execPath, ["-e", "setInterval(() => {}, 1000)"], `http://127.0.0.1:${port}/`, {
      install: "node",
      readyTimeoutMs: 1500,
    });
    await expect(start).rejects.toThrow(/not ready within 1\.5 s/);
  }, 30_000);

  it("a process that exits before it answers fails at once, naming the binary", async () => {
    const port = await freePort();
    const t0 = Date.now();
    await expect(
      startOwnServer(process.execPath, ["-e", "process.exit(3)"], `http://127.0.0.1:${port}/`, { install: "node" }),
    ).rejects.toThrow(/node.* exited before/);
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 30_000);

  it("a missing binary names what to install", async () => {
    await expect(
      startOwnServer("/nonexistent/own-server-bin", [], "http://127.0.0.1:1/", { install: "apt-get install nothing" }),
    ).rejects.toThrow(/apt-get install nothing/);
  });
});
