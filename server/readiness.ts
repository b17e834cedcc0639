/**
 * What `GET /readyz` answers: whether this replica can do its work — its configuration is valid and
 * every upstream it is configured with (Redis, Kafka, Prometheus, PostgreSQL) answers — and its part in the
 * fleet (`leader`, `follower`, `single`: server/replicas/leader.ts). `GET /healthz` is the process
 * alone (it serves); a failing upstream is a reason not to send traffic, never one to restart.
 *
 * **An upstream shared by every replica fails every replica's readiness at once**: a load balancer
 * that drops unready replicas then serves nothing while Redis is down, when the dashboard is most
 * needed. Route traffic on `/healthz`; use `/readyz` for monitoring and deploy gates (README).
 */
import { auditStore } from "./audit";
import { config, ConfigError } from "./config";
import { withTimeout } from "./dedup";
import { cachedHealth, PROBE_TIMEOUT_MS, type ComponentHealth, type Health } from "./health";
import { failureKind, redact } from "./redact";
import { replicaRole, type ReplicaRole } from "./replicas/leader";

/** `GET /readyz`'s body. */
export interface Readiness {
  status: "ready" | "not-ready";
  /** This replica's part in the fleet; absent when the configuration is invalid (no election ran). */
  role?: ReplicaRole;
  /** Why it is not ready, one line per cause (`redis: down — refused: …`); empty when ready. */
  reasons: string[];
}

/** The reason line of a configured upstream that did not answer, else null. */
function upstreamReason(name: string, h: ComponentHealth): string | null {
  return h.status === "down" ? `${name}: down — ${h.detail}` : null;
}

/**
 * With `DATABASE_URL`: why PostgreSQL (the audit trail, the replicas' shared state) does not answer
 * within the probe bound, redacted, else null. Without it: null (nothing configured to reach).
 */
export async function databaseReason(): Promise<string | null> {
  const c = config();
  if (!c.DATABASE_URL) return null;
  try {
    await withTimeout(
      auditStore().ready(),
      PROBE_TIMEOUT_MS,
      () => new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`),
    );
    return null;
  } catch (e) {
    return `postgres: down — ${failureKind(e)}: ${redact(e instanceof Error ? e.message : String(e), c)}`;
  }
}

/**
 * Checks the configuration, then probes the configured upstreams (the health probes, shared for
 * 2 s with `/api/health`, and PostgreSQL, each bounded by 2 s, in parallel). Never throws.
 */
export async function readiness(
  probe: () => Promise<Health> = cachedHealth,
  role: () => ReplicaRole = replicaRole,
  database: () => Promise<string | null> = databaseReason,
): Promise<Readiness> {
  try {
    config();
  } catch (e) {
    const why = e instanceof ConfigError ? e.message : `configuration: ${e instanceof Error ? e.message : String(e)}`;
    return { status: "not-ready", reasons: [why] };
  }
  const [upstreams, db] = await Promise.all([
    probe().then(
      (h) => Object.entries(h.components).flatMap(([name, c]) => upstreamReason(name, c) ?? []),
      (e: unknown) => [`health probes failed: ${e instanceof Error ? e.message : String(e)}`],
    ),
    database().catch((e: unknown) => `postgres: ${e instanceof Error ? e.message : String(e)}`),
  ]);
  const reasons = db ? [...upstreams, db] : upstreams;
  return { status: reasons.length === 0 ? "ready" : "not-ready", role: role(), reasons };
}
