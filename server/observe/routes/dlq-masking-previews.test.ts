/**
 * The previews of a re-drive and a discard (dry runs, over the embedded broker) show a DLQ record
 * as the caller may see it: a masked UUID header reads `***` in `uuid` and in a same-UUID
 * `sendUuid`, a removed handler is gone; the records are still chosen by what they hold.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_TOPIC } from "@/names/product";
import { MASK_MARKER, type MaskRule } from "@/lib/api/masking";
import { HANDLER_POISONED_KEY, REASON_POISONED_KEY, TOPIC_POISONED_KEY } from "@/names/dedup";
import { dlqTopicOf } from "@/names/dlq";
import { embeddedConfigPerTest } from "@/server/testing/app-config";
import { MemoryBroker } from "@/server/transport/memory-broker";
import { redriveDlq } from "./dlq-redrive";
import { discardDlq } from "./dlq-discard";
import { MemoryDlqStateStore, setDlqStateStore } from "../records/dlq-state";
import { maskerOf, UNMASKED } from "../records/masking";
import { registerEmbeddedLog } from "../records/memory-reader";

embeddedConfigPerTest();
// Each test's own DLQ states: another file's discard of the embedded DLQ's offset 0 must not close this record.
beforeEach(() => setDlqStateStore(new MemoryDlqStateStore()));
afterEach(async () => {
  registerEmbeddedLog(null);
  await setDlqStateStore(null);
});

const DLQ = dlqTopicOf(DEMO_TOPIC);
const rules: MaskRule[] = [
  { topic: DEMO_TOPIC, header: "_watermill_message_uuid", action: "MASK" },
  { topic: DEMO_TOPIC, header: HANDLER_POISONED_KEY, action: "REMOVE" },
];
const masked = maskerOf(rules, () => false);

async function dlqWithOne(): Promise<void> {
  const b = new MemoryBroker();
  b.createTopic(DEMO_TOPIC, 1);
  b.createTopic(DLQ, 1);
  registerEmbeddedLog(b);
  const signal = new AbortController().signal;
  const metadata = {
    [TOPIC_POISONED_KEY]: DEMO_TOPIC,
    [HANDLER_POISONED_KEY]: "on-review-created",
    [REASON_POISONED_KEY]: "push provider: 500",
  };
  await b.publisher().publish(DLQ, { uuid: "u-secret", metadata, payload: Buffer.from("{}"), signal, context: {} });
}

describe("re-drive and discard previews for a caller without unmasked", () => {
  it("a same-UUID re-drive named by its UUID matches the record, and its preview masks the UUID and drops the handler", async () => {
    await dlqWithOne();
    const r = await redriveDlq({ uuids: ["u-secret"], mode: "same-uuid", dryRun: true }, "test", masked);
    expect(r.matched).toBe(1);
    expect(r.preview).toEqual([expect.objectContaining({ uuid: MASK_MARKER, sendUuid: MASK_MARKER, handler: "" })]);
    expect(JSON.stringify(r)).not.toContain("u-secret");
    // The audit's lists (not in the answer) keep what was touched.
    expect(r.touched?.uuids).toEqual(["u-secret"]);
    const whole = await redriveDlq({ uuids: ["u-secret"], mode: "same-uuid", dryRun: true }, "test", UNMASKED);
    expect(whole.preview).toEqual([
      expect.objectContaining({ uuid: "u-secret", sendUuid: "u-secret", handler: "on-review-created" }),
    ]);
  });

  it("a discard preview masks the same way", async () => {
    await dlqWithOne();
    const r = await discardDlq(
      { positions: [{ partition: 0, offset: "0" }], why: "test", dryRun: true },
      "test",
      masked,
    );
    expect(r.preview).toEqual([expect.objectContaining({ uuid: MASK_MARKER, handler: "" })]);
    expect(r.uuids).toEqual(["u-secret"]);
  });
});
