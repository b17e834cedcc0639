/**
 * Which dashboard replica computes the scrape-time gauges (DLQ backlog, memory lost ratio,
 * consumer-group lag, Redis command time): with `DATABASE_URL`, the one replica that holds a
 * PostgreSQL advisory lock on a connection of its own; every other replica is a follower and
 * exports none of them, so Prometheus reads each figure once for the fleet. Without
 * `DATABASE_URL` the process is `"single"` and exports everything, as one replica always did.
 *
 * The lock is session-level (`pg_try_advisory_lock`): it is held while the holder's connection
 * lives and released by PostgreSQL when that connection dies (process killed, network cut), so a
 * follower that retries every {@link DEFAULT_LEADER_OPTIONS.retryMs} takes over within that
 * interval plus the time PostgreSQL needs to notice the dead connection (at once for a killed
 * process, whose socket the kernel closes). The holder checks its connection at the same interval
 * and steps down when it fails.
 */
import { Client } from "pg";
import { Gauge, type Registry } from "prom-client";
import { DASHBOARD_LEADER_METRIC } from "@/names/replicas";

/** This replica's part in the fleet. */
export type ReplicaRole = "leader" | "follower" | "single";

/** How the lock is taken and kept. */
export interface LeaderOptions {
  /** PostgreSQL connection string of the shared database. */
  databaseUrl: string;
  /**
   * Advisory lock key within {@link LEADER_LOCK_NAMESPACE}: one per fleet (./fleet.ts); replicas on
   * one database with the same key elect one leader.
   * @default 0
   */
  lockKey?: number;
  /**
   * How often a follower tries the lock and the leader checks its connection (ms).
   * @default 3000
   */
  retryMs?: number;
  /**
   * After how long without reaching the database a replica acts alone (`"single"`: it exports the
   * scrape-time gauges itself) rather than leave the fleet's alerts without inputs (ms).
   * @default 15000
   */
  aloneAfterMs?: number;
  /** Told every change of role (log lines, tests). */
  onChange?: (role: ReplicaRole, reason: string) => void;
}

/** Defaults of {@link LeaderOptions}. */
export const DEFAULT_LEADER_OPTIONS = { lockKey: 0, retryMs: 3000, aloneAfterMs: 15_000 } as const;

/** First key of the two-key advisory lock (`pg_try_advisory_lock(int, int)`): this app's locks. */
export const LEADER_LOCK_NAMESPACE = 4_177_001;

/**
 * One replica's election: tries the lock until it holds it, keeps checking it, steps down when its
 * connection fails. **A replica that cannot reach the database for `aloneAfterMs` acts alone**
 * (`"single"`): with PostgreSQL down every replica exports the gauges — duplicates, which the
 * alert rules' `max by (…)` absorb — instead of none, which would silence the alerts they feed.
 */
export class LeaderElection {
  private role: ReplicaRole = "follower";
  private unreachableSince: number | null = null;
  private client: Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly opts: Required<Omit<LeaderOptions, "onChange">> & Pick<LeaderOptions, "onChange">;

  constructor(opts: LeaderOptions) {
    this.opts = { ...DEFAULT_LEADER_OPTIONS, ...opts };
    if (!Number.isInteger(this.opts.lockKey) || Math.abs(this.opts.lockKey) > 0x7fffffff)
      throw new RangeError(`lockKey: expected a 32-bit whole number, got ${this.opts.lockKey}`);
    if (!(this.opts.retryMs >= 100 && this.opts.retryMs <= 60_000))
      throw new RangeError(`retryMs: expected 100..60000, got ${this.opts.retryMs}`);
  }

  /** `"leader"` while this replica holds the lock, `"single"` while it cannot reach the database (for `aloneAfterMs`), else `"follower"`. */
  current(): ReplicaRole {
    return this.role;
  }

  /** Tries at once, then every `retryMs`. Resolves after the first try. */
  async start(): Promise<void> {
    await this.tick();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick().finally(() => this.schedule()), this.opts.retryMs);
    this.timer.unref();
  }

  private set(role: ReplicaRole, reason: string): void {
    if (role === this.role) return;
    this.role = role;
    this.opts.onChange?.(role, reason);
  }

  /** One attempt: connect when needed, then take the lock (follower) or check the connection (leader). */
  private async tick(): Promise<void> {
    try {
      const c = await this.connection();
      if (this.role === "leader") {
        await c.query("SELECT 1");
        return;
      }
      const r = await c.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, $2::int) AS ok", [
        LEADER_LOCK_NAMESPACE,
        this.opts.lockKey,
      ]);
      this.unreachableSince = null;
      if (r.rows[0]?.ok) this.set("leader", "took the advisory lock");
      else this.set("follower", "another replica holds the advisory lock");
    } catch (e) {
      this.drop();
      this.unreachable(`the database did not answer (${e instanceof Error ? e.message : String(e)})`);
    }
  }

  /** Steps down; alone once the database has been unreachable for `aloneAfterMs`. */
  private unreachable(reason: string): void {
    const now = Date.now();
    this.unreachableSince ??= now;
    if (now - this.unreachableSince >= this.opts.aloneAfterMs)
      this.set(
        "single",
        `${reason} for ${Math.round((now - this.unreachableSince) / 1000)} s: exporting the scrape-time gauges alone until it answers`,
      );
    else if (this.role === "leader") this.set("follower", reason);
  }

  private async connection(): Promise<Client> {
    if (this.client) return this.client;
    const c = new Client({
      connectionString: this.opts.databaseUrl,
      connectionTimeoutMillis: Math.max(1000, this.opts.retryMs),
      // A query stuck on a silent network fails like a refused one; keepalives find a dead peer.
      query_timeout: Math.max(1000, this.opts.retryMs),
      keepAlive: true,
      application_name: "dedup-health leader",
    });
    // A dead connection releases the lock on the server side; this side steps down at once.
    c.on("error", () => {
      // A connection already replaced says nothing about the one in use.
      if (this.client !== c) return;
      this.drop();
      this.unreachable("the lock's connection failed");
    });
    this.client = c;
    try {
      await c.connect();
    } catch (e) {
      this.drop();
      throw e;
    }
    return c;
  }

  private drop(): void {
    const c = this.client;
    this.client = null;
    if (c) void c.end().catch(() => undefined);
  }

  /** Stops trying and releases the lock (closing the connection releases it). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = null;
    this.set("follower", "stopped");
    if (c) await c.end().catch(() => undefined);
  }
}

type G = typeof globalThis & { __dedupHealthLeader?: LeaderElection | null };

/**
 * Starts this process's election when `databaseUrl` is set (once per process; kept on
 * `globalThis` because Next.js loads this module in several bundles). Without it the process is
 * `"single"`.
 */
export async function startLeaderElection(
  databaseUrl: string | undefined,
  opts: Omit<LeaderOptions, "databaseUrl"> = {},
): Promise<ReplicaRole> {
  const g = globalThis as G;
  if (g.__dedupHealthLeader !== undefined) return replicaRole();
  if (!databaseUrl) {
    g.__dedupHealthLeader = null;
    return "single";
  }
  const e = new LeaderElection({ ...opts, databaseUrl });
  g.__dedupHealthLeader = e;
  await e.start();
  return e.current();
}

/**
 * This replica's role: `"single"` without `DATABASE_URL` (or before start-up elected), else
 * `"leader"` while it holds the lock and `"follower"` otherwise.
 */
export function replicaRole(): ReplicaRole {
  return (globalThis as G).__dedupHealthLeader?.current() ?? "single";
}

/** Whether this replica exports the scrape-time gauges: the leader, or a single replica. */
export function exportsFleetGauges(): boolean {
  return replicaRole() !== "follower";
}

/** Stops and forgets the process's election (tests). */
export async function stopLeaderElection(): Promise<void> {
  const g = globalThis as G;
  const e = g.__dedupHealthLeader;
  delete g.__dedupHealthLeader;
  await e?.stop();
}

/**
 * Registers {@link DASHBOARD_LEADER_METRIC} on `registry` (get-or-create): 1 while this replica
 * exports the scrape-time gauges, 0 on a follower, read at each scrape.
 */
export function registerLeaderGauge(registry: Registry): void {
  if (registry.getSingleMetric(DASHBOARD_LEADER_METRIC)) return;
  new Gauge({
    name: DASHBOARD_LEADER_METRIC,
    help: "1 on the dashboard replica that computes and exports the scrape-time gauges (the leader, or a single replica), 0 on a follower",
    registers: [registry],
    collect() {
      this.set(exportsFleetGauges() ? 1 : 0);
    },
  });
}
