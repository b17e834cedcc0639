/**
 * From a symptom to the record and back, in real Chromium against the built app in real mode (its
 * own SERVICE_NAME, DEMO_TOPIC and key prefix on the shared Redis and Kafka): a record published with
 * `kcat` is opened from its key (the key browser's lookup) and found by its UUID on the message page,
 * and the payload shown equals what `kcat -C` reads at that offset; the DLQ page
 * lists a record without a UUID under `marshal`; the re-drive's dry run shows the count and
 * publishes nothing, and the real re-drive, confirmed in a dialog that names the count, sends the
 * handler-error records back, where the demo processes them; the key page's forget, a dry run then
 * a confirmed run, deletes the keys (ioredis agrees); the audit page lists each action with its
 * counts. That trail is this app's own (in memory: no DATABASE_URL), so other runs' actions do not
 * mix in; a second app with DATABASE_URL shows that a PostgreSQL trail survives `next start` again.
 * Asserts no latency figure. Saves test-results/screenshots/act-{record,dlq,redrive,forget,audit,audit-restart}.png.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { Redis } from "ioredis";
import { Client } from "pg";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DlqResponse } from "@/lib/api/dlq";
import type { KeysResponse } from "@/lib/api/keys";
import type { RecordsResponse } from "@/lib/api/records";
import { kcatPayloadAt, kcatProduce } from "@/server/testing/kcat";
import { REAL_ENV, screenshot, startApp, until, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const id = randomBytes(4).toString("hex");
const service = `e2e-act-${id}`;
const topic = `e2e-act-${id}`;
const dlq = `${topic}.dlq`;
const HANDLER = "on-review-created";
const prefix = `${service}:dedup:${HANDLER}`;
let admin: Admin;
let redis: Redis;
/** Handler-error DLQ records the re-drive sent back (the audit names their count). */
let redriven = 0;

const get = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${app.url}${path}`);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return (await res.json()) as T;
};
const put = async (path: string, body: unknown) => {
  const res = await fetch(`${app.url}${path}`, {
    method: "PUT",
    headers: { "content-type": "application/json", origin: app.url },
    body: JSON.stringify(body),
  });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
};
/** Records of the demo topic holding `uuid` (the whole small topic is scanned). */
const copies = async (uuid: string) => {
  const r = await get<RecordsResponse>(`/api/records?topic=${topic}&uuid=${encodeURIComponent(uuid)}`);
  if (r.kind !== "search" || !r.complete) throw new Error(`a UUID search of ${topic} did not read the whole topic`);
  return r.records.length;
};
/** Accepts the next confirmation dialog and hands back its text. */
const confirmNext = (page: Page) =>
  new Promise<string>((resolve) => page.once("dialog", (d) => (resolve(d.message()), void d.accept())));

beforeAll(async () => {
  admin = new Kafka({
    clientId: `e2e-act-${id}`,
    brokers: [REAL_ENV.KAFKA_BROKERS],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  redis = new Redis(REAL_ENV.REDIS_URL);
});

afterAll(async () => {
  // Runs once the app has stopped (its hook is registered below; hooks after the tests run
  // last-registered first). The shared stack is left as it was found: the app's topics, groups,
  // dedup keys and DLQ guard keys.
  await admin?.deleteTopics({ topics: [topic, dlq] }).catch(() => {});
  const groups =
    (await admin?.listGroups().catch(() => ({ groups: [] })))?.groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith(`${service}.`)) ?? [];
  if (groups.length) await admin.deleteGroups(groups).catch(() => {});
  await admin?.disconnect();
  for (const pattern of [`${service}:*`, `dlq:${topic}:*`]) {
    const keys = await redis.keys(pattern);
    if (keys.length) await redis.unlink(...keys);
  }
  redis?.disconnect();
});

const app = appForTests({
  env: {
    REDIS_URL: REAL_ENV.REDIS_URL,
    KAFKA_BROKERS: REAL_ENV.KAFKA_BROKERS,
    PROMETHEUS_URL: REAL_ENV.PROMETHEUS_URL,
    SERVICE_NAME: service,
    DEMO_TOPIC: topic,
    DEMO_RATE: "4",
    DEDUP_PREFIXES: `${service}:dedup:*`,
  },
});
const browser = browserForTests();

describe("act on it: record, DLQ re-drive, forget, audit — in Chromium, real mode", () => {
  it("a record published with kcat is found by its UUID and opened from its key: the payload shown equals kcat -C at that offset", async () => {
    const uuid = randomUUID();
    const sent = JSON.stringify({ seq: -2, userId: "u-kcat", note: "published with kcat" });
    await kcatProduce(REAL_ENV.KAFKA_BROKERS, topic, 1, sent, {
      _watermill_message_uuid: uuid,
      "Event-Type": "review.created",
    });
    await until(`the demo's key for ${uuid}`, 60_000, async () =>
      (await redis.get(`${prefix}:${uuid}`))?.startsWith("done"),
    );
    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      // From its key: the key browser's lookup, then "open the message".
      await page.goto(`${app.url}/keys?prefix=${encodeURIComponent(prefix)}&refresh=off`);
      await page.getByTestId("lookup-input").fill(uuid);
      await page.getByRole("button", { name: "Look up" }).click();
      const link = page.getByTestId("key-lookup").getByTestId("open-message").first();
      await link.waitFor({ timeout: 30_000 });
      const at = new URL((await link.getAttribute("href"))!, app.url).searchParams;
      await link.click();
      const payload = page.getByTestId("record-payload");
      await payload.waitFor({ timeout: 30_000 });
      const [t, p, o] = ["topic", "partition", "offset"].map((k) => at.get(k)!);
      expect([t, p]).toEqual([topic, "1"]);
      const kcat = (await kcatPayloadAt(REAL_ENV.KAFKA_BROKERS, t!, Number(p), o!)).toString("utf8");
      expect(kcat).toBe(sent);
      expect(await payload.getAttribute("data-raw")).toBe(kcat);
      expect(await payload.getAttribute("data-encoding")).toBe("utf-8");
      expect((await page.getByTestId("record-uuid").textContent())!.trim()).toBe(uuid);
      expect(await page.getByTestId("record").textContent()).toContain("review.created");
      await screenshot(page, "act-record");
      // By its UUID: the message page's search lists that one record, which opens the same way.
      await page.goto(`${app.url}/records`);
      await page.getByTestId("record-topic").fill(topic);
      await page.getByTestId("record-uuid-input").fill(uuid);
      await page.getByRole("button", { name: "Find" }).click();
      const hits = page.getByTestId("record-search").getByTestId("open-message");
      await hits.first().waitFor({ timeout: 30_000 });
      expect(await hits.count()).toBe(1);
      await hits.first().click();
      await expect
        .poll(
          async () =>
            (await page
              .getByTestId("record-payload")
              .getAttribute("data-raw")
              .catch(() => null)) ?? "",
          { timeout: 30_000 },
        )
        .toBe(kcat);
      expect(await page.getByTestId("record-position").textContent()).toContain(`${topic} / 1 / ${o}`);
    });
  }, 120_000);

  it("DLQ: a record without UUID is listed under marshal; the dry run shows the count and publishes nothing; the confirmed re-drive sends them back", async () => {
    // A producer that forgot the UUID header, and a handler that fails every attempt for a moment.
    await kcatProduce(REAL_ENV.KAFKA_BROKERS, topic, 0, '{"seq":-1}', { "Event-Type": "review.created" });
    await put("/api/demo/sources", { retryOnError: { enabled: true, rate: 1 } });
    // Longer than a message's five attempts (4 retries, 0.2 → 1.6 s apart): the first ones fail them all.
    await new Promise((r) => setTimeout(r, 6000));
    await put("/api/demo/sources", { retryOnError: { enabled: false } });
    // Every failing message has gone through its retries to the DLQ: the count holds for 5 s.
    let last = -1;
    let since = Date.now();
    const failed = await until("the handler-error DLQ records to settle", 90_000, async () => {
      const l = await get<DlqResponse>("/api/dlq?reason=handler_error&limit=50");
      if (l.entries.length !== last) [last, since] = [l.entries.length, Date.now()];
      return last > 0 && Date.now() - since >= 5000 && l.entries;
    });
    const uuids = failed.map((e) => e.uuid!);
    expect(uuids.every(Boolean)).toBe(true);
    for (const u of uuids) expect(await copies(u), u).toBe(1);

    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/dlq?reason=marshal`);
      const marshal = page.getByTestId("dlq-records").getByTestId("dlq-row");
      await until(
        "the marshal record on the DLQ page",
        30_000,
        async () => (await marshal.count()) > 0 || (await page.reload(), false),
      );
      expect(await marshal.first().textContent()).toMatch(/— none.*marshal/);
      await screenshot(page, "act-dlq");

      await page.goto(`${app.url}/dlq?reason=handler_error`);
      const rows = page.getByTestId("dlq-records").getByTestId("dlq-row");
      await rows.first().waitFor({ timeout: 30_000 });
      expect(await rows.count()).toBe(uuids.length);
      const n = (redriven = uuids.length);
      await page.getByTestId("redrive-dry").click();
      const result = page.getByTestId("redrive-result");
      await expect
        .poll(async () => (await result.textContent().catch(() => "")) ?? "", { timeout: 30_000 })
        .toContain(`Dry run: would re-drive ${n} of ${n} matched`);
      for (const u of uuids) expect(await result.textContent()).toContain(u);
      for (const u of uuids) expect(await copies(u), `${u} after the dry run`).toBe(1);
      await screenshot(page, "act-redrive");

      const dialog = confirmNext(page);
      await page.getByTestId("redrive-real").click();
      // The confirmation restates the selection, the count, the mode and the rate.
      const asked = await dialog;
      expect(asked).toContain(
        `Re-drive ${n} message${n === 1 ? "" : "s"} from the DLQ, matching reason handler_error, back to their original topics`,
      );
      expect(asked).toContain("each with its own UUID, except payload conflicts, which get a new UUID");
      expect(asked).toContain("at most 50 per second");
      await expect
        .poll(async () => (await result.textContent()) ?? "", { timeout: 30_000 })
        .toContain(`Re-drove ${n} of ${n} matched`);
      for (const u of uuids) expect(await copies(u), `${u} after the re-drive`).toBe(2);
      // Each re-driven message is processed: its handler's key is done.
      for (const e of failed) {
        const key = `${service}:dedup:${e.handler}:${e.uuid}`;
        await until(`${key} done after the re-drive`, 60_000, async () => (await redis.get(key))?.startsWith("done"));
      }
    });
  }, 240_000);

  it("the key page forgets keys: the dry run counts them, the confirmed run deletes them (Redis agrees)", async () => {
    const keys = (
      await get<KeysResponse>(`/api/keys?prefix=${encodeURIComponent(prefix)}&count=50&state=done`)
    ).keys.slice(0, 3);
    expect(keys).toHaveLength(3);
    expect(await redis.exists(...keys.map((k) => k.key))).toBe(3);
    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/keys?prefix=${encodeURIComponent(prefix)}&refresh=off`);
      await page.getByTestId("action-uuids").fill(keys.map((k) => k.uuid).join("\n"));
      await page.getByTestId("action-dry").click();
      const result = page.getByTestId("action-result");
      await expect
        .poll(async () => (await result.textContent().catch(() => "")) ?? "", { timeout: 30_000 })
        .toContain("Dry run: 3 keys match");
      expect(await redis.exists(...keys.map((k) => k.key))).toBe(3);
      const dialog = confirmNext(page);
      await page.getByTestId("action-real").click();
      expect(await dialog).toMatch(
        new RegExp(
          `^Delete 3 keys of ${prefix} named by the 3 UUIDs given, leases of dead owners only, as listed by the dry run at \\d\\d:\\d\\d:\\d\\d\\?$`,
        ),
      );
      await expect
        .poll(async () => (await result.textContent()) ?? "", { timeout: 30_000 })
        .toContain("3 of 3 keys deleted");
      expect(await redis.exists(...keys.map((k) => k.key))).toBe(0);
      await screenshot(page, "act-forget");
    });
  }, 120_000);

  it("the audit page lists each action with its counts", async () => {
    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/audit`);
      const rows = page.getByTestId("audit-row");
      await rows.first().waitFor({ timeout: 30_000 });
      const cells = await rows.evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")),
      );
      const find = (action: string) => cells.filter((c) => c[2] === action).map((c) => [c[1], c[5], c[6], c[7]]);
      const n = redriven;
      expect(n).toBeGreaterThan(0);
      expect(find("keys.forget (dry run)")).toEqual([["local", "3", "0", "ok"]]);
      expect(find("keys.forget")).toEqual([["local", "3", "3", "ok"]]);
      expect(find("dlq.redrive (dry run)")).toEqual([["local", String(n), "0", "ok"]]);
      expect(find("dlq.redrive")).toEqual([["local", String(n), String(n), "ok"]]);
      expect(find("demo.sources")).toHaveLength(2);
      expect(await page.getByTestId("audit").textContent()).toContain("Kept in this process's memory");
      await screenshot(page, "act-audit");
    });
  }, 60_000);

  it("a trail in PostgreSQL survives a restart of the app: the audit page lists the forget made before it", async () => {
    const key = `${service}:dedup:restart:u-restart`;
    await redis.set(key, "done:x", "PX", 600_000);
    const env = {
      REDIS_URL: REAL_ENV.REDIS_URL,
      DATABASE_URL: REAL_ENV.DATABASE_URL,
      SERVICE_NAME: service,
      DEMO: "off",
      DEDUP_PREFIXES: `${service}:dedup:*`,
    };
    const pg = new Client({ connectionString: REAL_ENV.DATABASE_URL });
    let db = await startApp({ env });
    try {
      const res = await fetch(`${db.url}/api/keys/forget`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: db.url },
        body: JSON.stringify({ service, handler: "restart", uuids: ["u-restart"], dryRun: false }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await redis.exists(key)).toBe(0);
      await db.stop();
      db = await startApp({ env });
      await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
        await page.goto(`${db.url}/audit?action=keys.forget`);
        const mine = page.getByTestId("audit-row").filter({ hasText: service });
        await mine.first().waitFor({ timeout: 30_000 });
        const cells = await mine.evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")),
        );
        expect(cells.map((c) => [c[1], c[2], c[4], c[5], c[6], c[7]])).toEqual([
          ["local", "keys.forget", `keys: ${key}`, "1", "1", "ok"],
        ]);
        expect(await page.getByTestId("audit").textContent()).toContain("Kept in PostgreSQL");
        await screenshot(page, "act-audit-restart");
      });
    } finally {
      await db.stop();
      // The shared table keeps other runs' entries: only this run's go.
      await pg.connect();
      await pg.query("DELETE FROM dedup_health_audit WHERE filter->>'service' = $1", [service]).finally(() => pg.end());
    }
  }, 180_000);
});
