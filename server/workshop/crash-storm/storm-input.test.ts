/**
 * The storm's input: one record per event, or no figures. kafkajs resends a whole multi-partition
 * produce when one partition's leader refuses it, so the partitions that had accepted it hold their
 * records twice — Kafka transactions then answer both copies (counted as their duplicates) and the
 * window of one commit per event ends before the last records were read (counted as lost).
 */
import { describe, expect, it } from "vitest";
import type { RunView } from "@/lib/api/workshop";
import type { Message, Publisher } from "@/server/dedup";
import { MemoryTransport } from "@/server/transport";
import { scenarioEnv } from "../env";
import { WorkshopRunner } from "../workshop";
import { STORM } from "./storm";

/** The run's input topic: `workshop.<scenario>.<runId>` (its outputs and DLQ have a further suffix). */
const isInput = (topic: string) => /^workshop\.crash-storm-guarantees\.[^.]+$/.test(topic);

/** An embedded broker whose publishers note each produce request's size, and write every `resendEvery`-th request to the input twice (as kafkajs's resend does). */
class NotingTransport extends MemoryTransport {
  readonly inputRequests: number[] = [];

  constructor(private readonly resendEvery: number | null = null) {
    super();
  }

  override newPublisher(): Publisher {
    const inner = super.newPublisher();
    return {
      publish: async (topic: string, ...msgs: Message[]) => {
        await inner.publish(topic, ...msgs);
        if (!isInput(topic)) return;
        this.inputRequests.push(msgs.length);
        if (this.resendEvery !== null && this.inputRequests.length % this.resendEvery === 0)
          await inner.publish(topic, ...msgs);
      },
      close: () => inner.close(),
    };
  }
}

async function stormOn(transport: NotingTransport): Promise<RunView> {
  const base = scenarioEnv();
  const env = { ...base, transport };
  try {
    const runner = new WorkshopRunner(() => env);
    return await runner.wait(runner.start("crash-storm-guarantees"));
  } finally {
    await base.close();
    await transport.close();
  }
}

describe("the crash storm's input", () => {
  it("is published one record per produce request, so a refused request resent writes no event twice", async () => {
    const transport = new NotingTransport();
    const v = await stormOn(transport);
    expect(v.error).toBeNull();
    expect(transport.inputRequests).toHaveLength(STORM.events);
    expect(transport.inputRequests.every((n) => n === 1)).toBe(true);
    expect(v.guarantees?.find((g) => g.guarantee === "redis")?.status).toBe("measured");
  }, 60_000);

  it("holding some events twice, it is not measured: each guarantee that runs fails with the count, instead of showing duplicates or losses it did not cause", async () => {
    const v = await stormOn(new NotingTransport(4));
    const redis = v.guarantees?.find((g) => g.guarantee === "redis");
    expect(redis?.status).toBe("failed");
    const onTopic = STORM.events + STORM.events / 4;
    expect(redis?.status === "failed" && redis.reason).toBe(
      `the input topic holds ${onTopic} records for ${STORM.events} events (a producer wrote some twice): not measured`,
    );
    expect(redis).not.toHaveProperty("summary");
    expect(v.outcome?.met).toBe(false);
  }, 60_000);
});
