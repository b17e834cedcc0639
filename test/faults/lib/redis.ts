/**
 * A redis-server of the fault suite's own, on a free port (never the shared 6379): stop it for an
 * outage and start it again on the same port, optionally with AOF persistence so the dedup keys
 * survive the restart as they would on a production Redis.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Redis, type RedisOptions } from "ioredis";
import { waitForRedisPing } from "@/server/testing/net";
import { FAULTS_DIR, freePort, rmrf, startProc, type Proc } from "./procs";

/** Options of {@link FaultRedis}. */
export interface FaultRedisOptions {
  /** Keep data across a stop/start (AOF, fsync every second). @default false */
  persist?: boolean;
  /** `requirepass`: the URL then carries it. @default none */
  password?: string;
}

/** A private redis-server that can be stopped and started again on the same port. */
export class FaultRedis {
  proc: Proc | null = null;
  private constructor(
    readonly port: number,
    private readonly o: FaultRedisOptions,
    private readonly dir: string,
  ) {}

  /** Starts a server on a free port. */
  static async start(name: string, o: FaultRedisOptions = {}): Promise<FaultRedis> {
    const port = await freePort();
    const dir = join(FAULTS_DIR, "redis", `${name}-${port}`);
    rmrf(dir);
    mkdirSync(dir, { recursive: true });
    const r = new FaultRedis(port, o, dir);
    await r.up();
    return r;
  }

  /** `redis://[:password@]127.0.0.1:<port>` */
  get url(): string {
    return `redis://${this.o.password ? `:${encodeURIComponent(this.o.password)}@` : ""}127.0.0.1:${this.port}`;
  }

  /** Starts the server (again) on its port and waits for PING. */
  async up(): Promise<void> {
    if (this.proc?.alive()) return;
    const args = [
      "--port",
      String(this.port),
      "--bind",
      "127.0.0.1",
      "--dir",
      this.dir,
      "--save",
      "",
      "--daemonize",
      "no",
    ];
    args.push("--appendonly", this.o.persist ? "yes" : "no");
    if (this.o.persist) args.push("--appendfsync", "everysec");
    if (this.o.password) args.push("--requirepass", this.o.password);
    this.proc = startProc(`redis-${this.port}`, "redis-server", args);
    const proc = this.proc;
    try {
      await waitForRedisPing(this.url, { timeoutMs: 15_000, alive: () => proc.alive() });
    } catch {
      await proc.stop();
      throw new Error(`redis-server on ${this.port} did not answer PING:\n${proc.logs()}`);
    }
  }

  /** Stops the server (SIGTERM: with persistence the AOF is flushed). */
  async down(): Promise<void> {
    await this.proc?.stop(5_000);
  }

  /** An admin client (close it). */
  client(extra: RedisOptions = {}): Redis {
    const c = new Redis(this.url, { maxRetriesPerRequest: 1, ...extra });
    c.on("error", () => undefined);
    return c;
  }

  /** Stops the server and deletes its data. */
  async close(): Promise<void> {
    await this.down();
    rmrf(this.dir);
  }
}
