import { describe } from "vitest";
import { leaseRaceTests } from "./lease-race.suite";
import { MemoryRepository } from "../repository/memory-repository";

describe("MemoryRepository: the lease-expiry race", () => {
  // One process, one map: the three consumers share it, as replicas share one Redis.
  const repo = new MemoryRepository();
  leaseRaceTests({
    repository: () => repo,
    get: async (key) => repo.get(key),
    service: () => `t${Math.random().toString(36).slice(2, 10)}`,
  });
});
