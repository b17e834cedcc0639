/**
 * Test helpers for the `*.cluster.integration.test.ts` files: reach the local Redis Cluster
 * (`npm run stack:cluster`, 127.0.0.1:7000-7002, or REDIS_CLUSTER_NODES) and read its layout.
 * A cluster that is down fails the test with the instruction to start it — never a silent skip.
 */
import { Cluster, type ClusterOptions, type Redis } from "ioredis";
import { parseConfig } from "@/server/config";

/** The seed nodes of `npm run stack:cluster`. */
export const DEFAULT_CLUSTER_NODES = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"];

/** REDIS_CLUSTER_NODES (validated like the app's) or the local stack's seed nodes. */
export function clusterNodes(): string[] {
  const v = process.env.REDIS_CLUSTER_NODES;
  return v ? parseConfig({ REDIS_CLUSTER_NODES: v }).REDIS_CLUSTER_NODES! : DEFAULT_CLUSTER_NODES;
}

/** Connects to the cluster (3 masters, cluster_state:ok) or throws the instruction to start it. */
export async function connectCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const nodes = clusterNodes();
  return usableCluster(clusterClient({ clusterRetryStrategy: () => 200, ...options }, nodes), nodes);
}

/**
 * A client of the cluster at `nodes` (host:port seeds; default {@link clusterNodes}) with its
 * error events swallowed, not waited for: for a suite that checks readiness itself.
 */
export function clusterClient(options: ClusterOptions = {}, nodes: readonly string[] = clusterNodes()): Cluster {
  const c = new Cluster(
    nodes.map((hp) => ({ host: hp.slice(0, hp.lastIndexOf(":")), port: Number(hp.slice(hp.lastIndexOf(":") + 1)) })),
    options,
  );
  c.on("error", () => {});
  return c;
}

/**
 * `c` once it is ready with 3 masters and cluster_state:ok; else disconnects it and throws the
 * instruction to start the cluster (`nodes` name it). For a client made elsewhere (the app's).
 */
export async function usableCluster(c: Cluster, nodes: readonly string[] = clusterNodes()): Promise<Cluster> {
  try {
    await new Promise<void>((resolve, reject) => {
      if (c.status === "ready") return resolve();
      const t = setTimeout(() => reject(new Error(`not ready after 5 s (status ${c.status})`)), 5_000);
      c.once("ready", () => {
        clearTimeout(t);
        resolve();
      });
    });
    const info = String(await c.cluster("INFO"));
    if (!info.includes("cluster_state:ok")) throw new Error("cluster_state is not ok");
    if (c.nodes("master").length < 3) throw new Error(`expected 3 masters, found ${c.nodes("master").length}`);
    return c;
  } catch (e) {
    c.disconnect();
    throw new Error(
      `Redis Cluster at ${nodes.join(",")} is not usable (${(e as Error).message}): run npm run stack:cluster`,
    );
  }
}

/** A master of the cluster: node id, host:port, number of slots it serves. */
export interface MasterInfo {
  id: string;
  addr: string;
  slots: number;
}

/** Masters from CLUSTER NODES: id, host:port, number of slots served. */
export async function clusterMasters(c: Cluster): Promise<MasterInfo[]> {
  const text = String(await c.cluster("NODES"));
  return text
    .trim()
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f[2]?.includes("master"))
    .map((f) => ({
      id: f[0]!,
      addr: f[1]!.split("@")[0]!,
      slots: f.slice(8).reduce((n, r) => {
        if (r.startsWith("[")) return n; // a slot being migrated / imported
        const [lo, hi] = r.split("-").map(Number);
        return n + ((hi ?? lo!) - lo! + 1);
      }, 0),
    }))
    .sort((a, b) => a.addr.localeCompare(b.addr));
}

/** Deletes every key under `prefix` (SCAN per master of a cluster, single-key UNLINKs); returns how many. */
export async function deletePrefix(c: Redis | Cluster, prefix: string): Promise<number> {
  const nodes = c instanceof Cluster ? c.nodes("master") : [c];
  let n = 0;
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) {
        const p = node.pipeline();
        for (const k of keys) p.unlink(k);
        await p.exec();
        n += keys.length;
      }
    } while (cursor !== "0");
  }
  return n;
}

/** Sum of `INFO errorstats` counters (MOVED, ASK, CROSSSLOT, …) over the masters. */
export async function errorStats(c: Cluster): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const n of c.nodes("master")) {
    const text = await n.info("errorstats");
    for (const m of text.matchAll(/errorstat_(\w+):count=(\d+)/g)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}
