/** The options of the live demo ({@link DemoService} in ./demo.ts), one interface as the house style has it. */
import type { Registry } from "prom-client";
import type { DedupRepository } from "@/server/dedup/repository";
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

