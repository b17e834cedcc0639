/**
 * The production image's contents without a Docker engine: the run stage of infra/app.Dockerfile
 * holds `.next/standalone`, `.next/static` and RUNBOOK.md under its WORKDIR and runs its CMD as an
 * unprivileged user. Here the same files are copied into a temporary directory owned by root and
 * the Dockerfile's own CMD runs there as `nobody` with its ENV (HOST and PORT set for the test):
 * pages and APIs answer, the process runs as nobody and cannot write to its files, and no dev
 * dependency is in the server's node_modules.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, until } from "./harness";

const dockerfile = readFileSync(join(ROOT, "infra/app.Dockerfile"), "utf8");
const runStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
/** The run stage's `ENV K=V` lines. */
const imageEnv = Object.fromEntries([...runStage.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
/** The run stage's CMD (exec form). */
const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runStage)![1]!) as string[];
/** Its HEALTHCHECK command (exec form). */
const healthcheck = JSON.parse(/^HEALTHCHECK .* CMD (\[.*\])$/m.exec(runStage)![1]!) as string[];
const routes = () =>
  Object.values(
    JSON.parse(readFileSync(join(ROOT, ".next/app-path-routes-manifest.json"), "utf8")) as Record<string, string>,
  );

const port = 3800 + Math.floor(Math.random() * 100);
const url = `http://127.0.0.1:${port}`;
let dir = "";
let server: ChildProcess | undefined;
let out = "";

beforeAll(async () => {
  if (!existsSync(join(ROOT, ".next/standalone/server.js")))
    throw new Error(
      'no .next/standalone: next.config.js must say output: "standalone" and `npx next build` must have run',
    );
  // The image's WORKDIR, as its COPY lines fill it; owned by root, readable by everyone.
  dir = mkdtempSync(join(tmpdir(), "he-standalone-"));
  cpSync(join(ROOT, ".next/standalone"), dir, { recursive: true });
  cpSync(join(ROOT, ".next/static"), join(dir, ".next/static"), { recursive: true });
  cpSync(join(ROOT, "RUNBOOK.md"), join(dir, "RUNBOOK.md"));
  execFileSync("chmod", ["-R", "a+rX,go-w", dir]);
  execFileSync("chmod", ["755", dir]);
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: "production" as const,
    ...imageEnv,
    HOST: "127.0.0.1",
    PORT: String(port),
    DEMO: "off",
  };
  server = spawn("runuser", ["-u", "nobody", "--", ...cmd], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  server.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  server.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  await until(
    `the standalone server on ${url}:\n${out}`,
    30_000,
    async () => (await fetch(`${url}/api/health`).catch(() => null))?.ok,
  );
}, 60_000);

afterAll(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r));
    process.kill(-server.pid, "SIGTERM");
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the production image's server (standalone output, as the Dockerfile's CMD runs it)", () => {
  it("runs as an unprivileged user that cannot rewrite the app", () => {
    // Every process of the server's process group but runuser itself (runuser → sh → exec node, titled next-server).
    const group = execFileSync("pgrep", ["-g", String(server!.pid)], { encoding: "utf8" })
      .trim()
      .split("\n");
    const uids = group.flatMap((p) => {
      try {
        if (readFileSync(`/proc/${p}/comm`, "utf8").trim() === "runuser") return [];
        return [/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, "utf8"))![1]];
      } catch {
        return [];
      }
    });
    expect(uids.length).toBeGreaterThan(0);
    expect(new Set(uids)).toEqual(new Set(["65534"]));
    expect(() =>
      execFileSync("runuser", ["-u", "nobody", "--", "touch", join(dir, "server.js")], { stdio: "ignore" }),
    ).toThrow();
  });

  it("serves pages, the runbook and the APIs", async () => {
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/);
    // The runbook is read from the working directory at run time.
    const runbook = await fetch(`${url}/runbook`);
    expect(runbook.status).toBe(200);
    expect(await runbook.text()).toMatch(/DedupMemoryLost/);
    const health = (await (await fetch(`${url}/api/health`)).json()) as { components?: unknown };
    expect(health).toHaveProperty("components");
    // A static chunk the page loads comes from .next/static.
    const chunk = readdirSync(join(dir, ".next/static/chunks")).find((f) => f.endsWith(".js"))!;
    expect((await fetch(`${url}/_next/static/chunks/${chunk}`)).status).toBe(200);
  });

  it("holds no dev dependency and no sources", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    const modules = readdirSync(join(dir, "node_modules")).flatMap((m) =>
      m.startsWith("@") ? readdirSync(join(dir, "node_modules", m)).map((s) => `${m}/${s}`) : [m],
    );
    const dev = Object.keys(pkg.devDependencies).filter((d) => modules.includes(d));
    expect(dev).toEqual([]);
    expect(existsSync(join(dir, "server"))).toBe(false);
    expect(existsSync(join(dir, "app"))).toBe(false);
  });

  it.skipIf(!routes().includes("/healthz"))("the image's HEALTHCHECK passes against it", () => {
    execFileSync(healthcheck[0]!, healthcheck.slice(1), {
      env: { PATH: process.env.PATH, NODE_ENV: "production" as const, PORT: String(port) },
      stdio: "ignore",
      timeout: 10_000,
    });
  });
});
