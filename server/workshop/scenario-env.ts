/** What a workshop run is given by where it executes (server/workshop/env.ts builds it). */
import type { Registry } from "prom-client";
import type { DedupRepository } from "@/server/dedup";
import type { PushObserver, SideEffectStore } from "@/server/notification/side-effects";
import type { Transport } from "@/server/transport";

/** Where scenarios run: the transport, a shared dedup store, a side-effect store factory. */
export interface ScenarioEnv {
  transport: Transport;
  /** A repository shared by every replica of a run (Redis, or one in-memory map per run in embedded mode). */
  sharedRepository(): DedupRepository;
  /** A fresh in-process repository (the in-process-cache anti-pattern: one per replica). */
  localRepository(): DedupRepository;
  /** A side-effect store scoped to one run (`scope` is unique per run). */
  sideEffectStore(scope: string, observe: PushObserver): SideEffectStore;
  /** Deletes the run's dedup keys (`<prefix>:*`). */
  deleteKeys(prefix: string): Promise<void>;
  /** First segment of dedup keys and the `service` metric label. @default "workshop" */
  service: string;
  /**
   * Registry for the Deduplicator's and PoisonQueue's metrics: the workshop's own
   * (`workshopRegistry()`), **never the one `/api/metrics` serves**. A run's series are removed
   * from it when the run ends. @default none
   */
  registry?: Registry;
  /** Partitions of a run's topic. @default 3 */
  partitions?: number;
  /** PostgreSQL of the run's own tables (the crash storm's inbox). @default none: what needs it is not run */
  databaseUrl?: string;
}
