/**
 * DLQ record states on the DLQ page, in real Chromium against the built app in real mode (its own
 * SERVICE_NAME and DEMO_TOPIC, demo off): three DLQ records published with `kcat` are listed as
 * `open`; one ticked and discarded — the confirmation lists it by position and UUID and asks why —
 * leaves the default (open) view and shows under State "discarded" with who and the reason; the
 * audit trail has the discard with its position. Saves test-results/screenshots/dlq-states.png.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Kafka, logLevel, type Admin } from "kafkajs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditResponse } from "@/lib/api/audit";
import {
  HANDLER_POISONED_KEY,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { kcatProduce } from "@/server/testing/kcat";
import { REAL_ENV, screenshot, until, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const id = randomBytes(4).toString("hex");
const service = `e2e-dlqst-${id}`;
const topic = `e2e-dlqst-${id}`;
const dlq = `${topic}.dlq`;
const uuids = [randomUUID(), randomUUID(), randomUUID()];
let admin: Admin;

beforeAll(async () => {
  admin = new Kafka({
    clientId: `e2e-dlqst-${id}`,
    brokers: [REAL_ENV.KAFKA_BROKERS],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic, numPartitions: 1 },
      { topic: dlq, numPartitions: 1 },
    ],
    waitForLeaders: true,
  });
  for (const u of uuids) {
    const headers = {
      [WATERMILL_UUID_HEADER]: u,
      [HANDLER_POISONED_KEY]: "on-order-paid",
      [TOPIC_POISONED_KEY]: topic,
      [REASON_CLASS_POISONED_KEY]: "handler_error",
      [REASON_POISONED_KEY]: "boom",
      [SUBSCRIBER_POISONED_KEY]: "kafka",
    };
    await kcatProduce(REAL_ENV.KAFKA_BROKERS, dlq, 0, '{"order":1}', headers);
  }
}, 60_000);

afterAll(async () => {
  await admin?.deleteTopics({ topics: [topic, dlq] }).catch(() => {});
  await admin?.disconnect();
});

const app = appForTests({
  env: {
    KAFKA_BROKERS: REAL_ENV.KAFKA_BROKERS,
    SERVICE_NAME: service,
    DEMO: "off",
    DEMO_TOPIC: topic,
    CONSUMER_TOPICS: topic,
  },
});
const browser = browserForTests();

/** Answers the next prompt with `reply` and hands back its text. */
const answerNext = (page: Page, reply: string) =>
  new Promise<string>((resolve) => page.once("dialog", (d) => (resolve(d.message()), void d.accept(reply))));

describe("DLQ record states on the DLQ page", () => {
  it("a ticked record discarded with a reason leaves the open view, shows as discarded with who and why, and is audited", async () => {
    await withPage(browser, { viewport: { width: 1400, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/dlq?topic=${dlq}`);
      const rows = page.getByTestId("dlq-records").getByTestId("dlq-row");
      await until(
        "the three open records",
        30_000,
        async () => (await rows.count()) === 3 || (await page.reload(), false),
      );
      expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute("data-state")))).toEqual([
        "open",
        "open",
        "open",
      ]);

      // The newest record is the last one published: offset 2.
      const newest = rows.first();
      expect(await newest.textContent()).toContain(uuids[2]);
      await expect.poll(async () => newest.getByTestId("dlq-tick").isEnabled(), { timeout: 15_000 }).toBe(true);
      await newest.getByTestId("dlq-tick").check();
      const asked = answerNext(page, "a test order, never real");
      await page.getByTestId("discard-real").click();
      const text = await asked;
      expect(text).toContain(`Discard 1 open DLQ record of ${dlq}`);
      expect(text).toContain(`0/2 ${uuids[2]} on-order-paid handler_error`);
      expect(text).toContain("Why do they need no re-drive?");
      await expect
        .poll(
          async () =>
            (await page
              .getByTestId("discard-result")
              .textContent()
              .catch(() => "")) ?? "",
          { timeout: 30_000 },
        )
        .toContain("Discarded 1");
      await expect.poll(async () => rows.count(), { timeout: 30_000 }).toBe(2);
      expect(await page.getByTestId("dlq-records").textContent()).not.toContain(uuids[2]);

      await page.getByTestId("dlq-state").selectOption("discarded");
      await expect.poll(async () => rows.count(), { timeout: 30_000 }).toBe(1);
      const row = rows.first();
      expect(await row.getAttribute("data-state")).toBe("discarded");
      expect(await row.textContent()).toMatch(/discarded by local at .*: a test order, never real/);
      await screenshot(page, "dlq-states");
    });
    const trail = await until("the discard in the audit trail", 15_000, async () => {
      const a = (await (await fetch(`${app.url}/api/audit?action=dlq.discard&limit=10`)).json()) as AuditResponse;
      return a.entries.find((e) => !e.dryRun);
    });
    expect(trail).toMatchObject({
      who: "local",
      matched: 1,
      changed: 1,
      result: "ok",
      touched: { sourceOffsets: { items: [`${dlq}/0/2`], total: 1 }, uuids: { items: [uuids[2]], total: 1 } },
    });
  }, 120_000);
});
