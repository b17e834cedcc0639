/**
 * The live demo's settings ({@link DemoService} in ./demo.ts): its options, one interface as the
 * house style has it, with their defaults applied; and the state of the duplicate sources a
 * presenter switches later, which the traffic and the replicas read on every turn.
 */
import type { Registry } from "prom-client";
import { dlqTopicOf } from "@/names/dlq";
import type { DemoSources } from "@/lib/api/demo";
import { DEMO_TOPIC } from "@/names/product";
import { replicaId } from "@/server/transport/replica-id";
import type { DedupRepository } from "@/server/dedup";
import type { RedisClient } from "@/server/dedup-redis";
import type { SideEffectStore } from "@/server/notification/side-effects";
import type { Transport } from "@/server/transport";
import type { BeforeCommit } from "@/server/transport/partition-pump";
import type { BackgroundDuplicatesOptions } from "./background-duplicates";

/** Options of `DemoService`. */
export interface DemoServiceOptions {
  transport: Transport;
  /** The dedup store shared by every replica (Redis, or one in-memory map in embedded mode). */
  repository: DedupRepository;
  /** The consumer's own Redis client (real mode): what the Redis cut-off disconnects. */
  redis?: RedisClient;
  store: SideEffectStore;
  /** Service name (SERVICE_NAME): key prefix `<service>:dedup:<handler>`, metric label, groups `<service>.<handler>`. */
  service: string;
  registry?: Registry;
  /** Initial traffic, messages per second (DEMO_RATE). @default 5 */
  ratePerSec?: number;
  /** Topic (DEMO_TOPIC). @default demo.events */
  topic?: string;
  /** DLQ. @default `<topic>.dlq` */
  dlqTopic?: string;
  /**
   * Offset commit interval of the demo's consumers (like kafkajs's auto-commit): a rebalance
   * re-reads what was acked since the last commit. @default 2000
   */
  commitIntervalMs?: number;
  /**
   * Name of the main replica (`context.subscriber`, group clientId, DLQ metadata,
   * `dedup_consumer_info`); further replicas of this service add `-r<n>` / `-crash<n>`.
   * @default `<hostname>-<pid>`
   */
  replicaName?: string;
  /** Fault injection on the main replica (`npm run worker -- --crash-before-commit`). @default none */
  beforeCommit?: BeforeCommit;
  /**
   * A background of duplicates below 1 % with no toggle touched (occasional producer retries, a rare
   * restart before commit; see background-duplicates.ts), or `false`. @default on in embedded mode
   */
  backgroundDuplicates?: Partial<BackgroundDuplicatesOptions> | false;
}

/** The options with their defaults applied: what the demo's parts read. */
export type ResolvedDemoOptions = Required<
  Omit<DemoServiceOptions, "redis" | "registry" | "beforeCommit" | "backgroundDuplicates">
> &
  Pick<DemoServiceOptions, "redis" | "registry" | "beforeCommit">;

/** Applies the defaults; a rate outside [0, 5000] is a RangeError naming `DEMO_RATE`. */
export function resolveDemoOptions(options: DemoServiceOptions): ResolvedDemoOptions {
  const topic = options.topic ?? DEMO_TOPIC;
  const o = {
    ratePerSec: 5,
    topic,
    dlqTopic: dlqTopicOf(topic),
    commitIntervalMs: 2000,
    replicaName: replicaId(),
    ...options,
  };
  if (!(o.ratePerSec >= 0 && o.ratePerSec <= 5000))
    throw new RangeError("DemoService: ratePerSec must be in [0, 5000] (DEMO_RATE)");
  return o;
}

/** The traffic and the four duplicate sources as switched now (`PUT /api/demo/sources` merges into it). */
export type DemoSourcesState = Omit<DemoSources, "mode" | "running">;

/** The sources at start: traffic at the configured rate, every duplicate source off. */
export function initialSources(ratePerSec: number): DemoSourcesState {
  return {
    traffic: { enabled: ratePerSec > 0, ratePerSec },
    retryOnError: { enabled: false, rate: 0.2 },
    rebalance: { enabled: false, replicas: 1, periodMs: 15_000 },
    forwarderRepublish: { enabled: false, rate: 0.1, delayMs: 3000 },
    restartBeforeCommit: { enabled: false, periodMs: 20_000 },
  };
}
