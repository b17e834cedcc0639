/**
 * Start-up of the fleet's shared parts: the leader election (./leader.ts) and the shared state in
 * PostgreSQL (./shared-state.ts: events and chart markers, memory-loss baselines). Without
 * `DATABASE_URL` nothing starts: the process is a single replica keeping that state in memory.
 */
import type { AppConfig } from "@/server/config";
import { appRegistry } from "@/server/registry";
import { fleetId, fleetLockKey, type FleetConfig } from "./fleet";
import { registerLeaderGauge, replicaRole, startLeaderElection, type ReplicaRole } from "./leader";
import { initSharedState } from "./shared-state";

export { exportsFleetGauges, replicaRole, type ReplicaRole } from "./leader";

/**
 * Elects (or not) and makes the shared tables; logs this replica's role and every change of it.
 * A database that does not answer leaves the replica a follower (it retries) and the shared state
 * in memory until it answers; never throws.
 */
export async function startReplicas(c: Pick<AppConfig, "DATABASE_URL"> & FleetConfig): Promise<ReplicaRole> {
  const onChange = (role: ReplicaRole, reason: string) =>
    console.log(`[dedup-health] replica role: ${role} (${reason})`);
  // Replicas configured to watch the same stores are one fleet: one lock, one set of baselines.
  const fleet = fleetId(c);
  await initSharedState(c.DATABASE_URL, fleet).catch((e: unknown) =>
    console.error(
      `[dedup-health] shared state: ${e instanceof Error ? e.message : String(e)}; kept in this process until the database answers`,
    ),
  );
  const role = await startLeaderElection(c.DATABASE_URL, { onChange, lockKey: fleetLockKey(fleet) }).catch(() =>
    replicaRole(),
  );
  registerLeaderGauge(appRegistry());
  console.log(
    `[dedup-health] replica role: ${role}${role === "single" ? " (DATABASE_URL is not set: this process computes every scrape-time gauge; run one replica only)" : ` (fleet ${fleet}: the advisory-lock holder exports the scrape-time gauges)`}`,
  );
  return role;
}
