import { MemoryRepository } from "@/server/dedup";
import { MemoryTransport } from "@/server/transport";
import { demoTogglesSuite } from "./demo-toggles.suite";

/** The toggles on the embedded broker and store: every case its own broker and in-memory store. */
demoTogglesSuite({
  label: "the embedded broker",
  leavingCases: ["rebalanceFaults", "restartFaults"],
  world: async (name) => {
    const repository = new MemoryRepository();
    return {
      transport: new MemoryTransport(),
      repository,
      topic: "demo.events",
      dlqTopic: "demo.events.dlq",
      service: `toggles-${name}`,
      leasedKeys: async () =>
        [...repository.entries()].filter((e) => e.value.startsWith("processing:") && e.expiresAt > Date.now()).length,
    };
  },
  rate: 40,
  runMs: 7_000,
  drainMs: 8_000,
  periodMs: 1_500,
  tailMs: 500,
  timeoutMs: 60_000,
});
