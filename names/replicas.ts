/**
 * Names of the dashboard fleet's own series (server/replicas): which replica leads.
 * **Imports nothing.**
 */

/**
 * Gauge, no labels: 1 on the replica that computes and exports the scrape-time gauges (the leader,
 * or a single replica without `DATABASE_URL`), 0 on a follower. `sum` over the fleet is 1 when
 * exactly one replica leads.
 */
export const DASHBOARD_LEADER_METRIC = "dedup_dashboard_leader";
