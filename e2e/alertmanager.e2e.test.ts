/**
 * The SRE's loop with a real Alertmanager, in real Chromium: one record without a message UUID on
 * the app's own topic fires `DedupRedisErrors{reason="marshal"}` in a private Prometheus (5 s
 * scrape and evaluation, the project's rules with that alert's `for` cut to 5 s), which sends it to
 * a private Alertmanager (the project's config). The alerts page shows it active in Alertmanager; a
 * silence created on the page makes Alertmanager list it suppressed and `amtool silence query`
 * list exactly the page's silences; expiring it on the page makes it active again.
 * Then the chart markers: on the handler page's error chart, the alert's firing transition, a demo
 * fault toggle, a consumer-group rebalance and a DLQ re-drive are marked within one scrape (5 s) of
 * when they happened, each with its hover text and legend entry. Saves
 * test-results/screenshots/alertmanager-{active,silenced,markers}.png.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kafka, logLevel, type Admin } from "kafkajs";
import type { Browser, Page } from "playwright-core";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import { ALERT_NAMES } from "@/lib/thresholds";
import {
  HANDLER_POISONED_KEY,
  METRIC_NAMES,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import type { AmAlert } from "@/server/observe/alertmanager/client";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";
import { promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import {
  collectErrors,
  freePort,
  launchBrowser,
  REAL_ENV,
  ROOT,
  screenshot,
  startApp,
  until,
  type App,
} from "./harness";
import { handlerGroupId } from "@/names/kafka";

const id = randomBytes(4).toString("hex");
const service = `e2e-am-${id}`;
const topic = `e2e-am-${id}`;
let dir: string;
let am: OwnAlertmanager;
let prom: OwnPrometheus;
let app: App;
let browser: Browser;
let admin: Admin;

/** The project's rules with DedupRedisErrors' `for` cut to 5 s, so the test waits seconds, not a minute. */
function fastRules(): string {
  const rules = readFileSync(join(ROOT, "infra/prometheus/rules/dedup.yml"), "utf8");
  const at = rules.indexOf(`alert: ${ALERT_NAMES.redisErrors}`);
  const forAt = rules.indexOf("for: ", at);
  const end = rules.indexOf("\n", forAt);
  const file = join(dir, "rules.yml");
  writeFileSync(file, rules.slice(0, forAt) + "for: 5s" + rules.slice(end));
  return file;
}

/** Alertmanager's own list: our service's marshal alert, if it holds it. */
async function amMarshal(): Promise<AmAlert | undefined> {
  const list = (await (await fetch(`${am.url}/api/v2/alerts`)).json()) as AmAlert[];
  return list.find(
    (a) =>
      a.labels.alertname === ALERT_NAMES.redisErrors && a.labels.service === service && a.labels.reason === "marshal",
  );
}

/** `amtool silence query` (silences in force) as ids, sorted. */
function amtoolIds(): string[] {
  const out = execFileSync("amtool", ["silence", "query", "-q", `--alertmanager.url=${am.url}`], { encoding: "utf8" });
  return out.split("\n").filter(Boolean).sort();
}

/** The marshal instance's row on the alerts page. */
const marshalRow = (page: Page) =>
  page
    .getByTestId(`rule-${ALERT_NAMES.redisErrors}`)
    .locator(`[data-testid="alert-instance"][data-labels*='"reason":"marshal"']`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "e2e-am-"));
  am = await startOwnAlertmanager({ configFile: join(ROOT, "infra/alertmanager/alertmanager.yml") });
  const kafka = new Kafka({ clientId: `e2e-am-${id}`, brokers: [REAL_ENV.KAFKA_BROKERS], logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  const appPort = await freePort();
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${appPort}`],
    ruleFiles: [fastRules()],
    intervalSec: 5,
    metricsPath: "/api/metrics",
    alertmanagers: [new URL(am.url).host],
  });
  app = await startApp({
    port: appPort,
    env: {
      REDIS_URL: REAL_ENV.REDIS_URL,
      KAFKA_BROKERS: REAL_ENV.KAFKA_BROKERS,
      PROMETHEUS_URL: prom.url,
      ALERTMANAGER_URL: am.url,
      SERVICE_NAME: service,
      DEMO_TOPIC: topic,
      DEMO_RATE: "2",
    },
  });
  browser = await launchBrowser();
}, 150_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await prom?.stop();
  await am?.stop();
  await admin?.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => {});
  await admin?.disconnect();
  // The demo's dedup keys and the DLQ copy's guard key: the shared Redis is left as it was found
  // (a handler left behind would show on the other tests' overview).
  const redis = new Redis(REAL_ENV.REDIS_URL, { lazyConnect: true });
  try {
    for (const pattern of [`${service}:dedup:*`, `dlq:${topic}:*`]) {
      const keys = await redis.keys(pattern);
      if (keys.length) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("Alertmanager: a marshal error fires, is silenced from the app, and the silence expires", () => {
  it("record without UUID → Alertmanager active → page shows it → silence in the app → suppressed, amtool agrees → expire → active", async () => {
    // Prometheus must have scraped the error counter at 0 first: the first error is then an increase.
    await until("Prometheus scraping the app's error counter", 40_000, async () => {
      return (await promQuery(prom.url, `${METRIC_NAMES.errors}{service="${service}",reason="marshal"}`)).length > 0;
    });
    const producer = new Kafka({
      clientId: `e2e-am-p-${id}`,
      brokers: [REAL_ENV.KAFKA_BROKERS],
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: "{}", headers: { "Event-Type": "review.created" } }] }); // no _watermill_message_uuid
    await producer.disconnect();

    const received = await until("Alertmanager receiving DedupRedisErrors{reason=marshal}", 60_000, amMarshal);
    expect(received.status.state).toBe("active");

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = collectErrors(page);
    await page.goto(`${app.url}/alerts?refresh=5s`);
    const row = marshalRow(page);
    await row.getByTestId("am-state").and(page.locator('[data-state="active"]')).waitFor({ timeout: 20_000 });
    await screenshot(page, "alertmanager-active");

    // Silence it from the page.
    await row.getByTestId("silence-open").click();
    await row.getByTestId("silence-comment").fill(`e2e ${id}: publisher fix deploying`);
    await row.getByTestId("silence-submit").click();
    const suppressed = await until("Alertmanager listing the alert suppressed", 20_000, async () => {
      const a = await amMarshal();
      return a?.status.state === "suppressed" ? a : undefined;
    });
    const silenceId = suppressed.status.silencedBy[0]!;
    expect(amtoolIds()).toEqual([silenceId]);
    await row.locator(`[data-testid="am-suppressor"][data-id="${silenceId}"]`).waitFor({ timeout: 15_000 });
    expect(await row.getByTestId("am-state").getAttribute("data-state")).toBe("suppressed");
    // The page's silence list is amtool's list.
    // (once the list's own poll has come back: under load it lands after the instance's state)
    const listed = () =>
      page.getByTestId("silence-row").evaluateAll((els) => els.map((e) => e.getAttribute("data-silence")).sort());
    await expect.poll(listed, { timeout: 15_000 }).toEqual(amtoolIds());
    await screenshot(page, "alertmanager-silenced");

    // Expire it from the page: Alertmanager lists the alert active again, amtool lists no silence.
    await page
      .locator(`[data-testid="silence-row"][data-silence="${silenceId}"]`)
      .getByTestId("silence-expire")
      .click();
    await until(
      "Alertmanager listing the alert active again",
      20_000,
      async () => (await amMarshal())?.status.state === "active",
    );
    expect(amtoolIds()).toEqual([]);
    await row.getByTestId("am-state").and(page.locator('[data-state="active"]')).waitFor({ timeout: 15_000 });
    expect(errors).toEqual([]);
    await page.close();

    await markersAtTheirTimes(Date.parse(received.startsAt) / 1000);
  }, 150_000);
});

/** Sends a write as the page does (same origin, JSON). */
async function send(method: "PUT" | "POST", path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { "content-type": "application/json", origin: app.url },
    body: JSON.stringify(body),
  });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return res.json();
}
const put = (path: string, body: unknown) => send("PUT", path, body);

/**
 * A handler-error DLQ record of on-review-created (as the PoisonQueue writes it), re-driven by its
 * UUID through the API the DLQ page uses; the time (unix s) the re-drive answered.
 */
async function redriveOne(): Promise<number> {
  const uuid = ulid();
  const producer = new Kafka({
    clientId: `e2e-am-r-${id}`,
    brokers: [REAL_ENV.KAFKA_BROKERS],
    logLevel: logLevel.NOTHING,
  }).producer();
  await producer.connect();
  const headers = {
    [WATERMILL_UUID_HEADER]: uuid,
    "Event-Type": "review.created",
    [REASON_POISONED_KEY]: "handler failed: e2e",
    [TOPIC_POISONED_KEY]: topic,
    [HANDLER_POISONED_KEY]: "on-review-created",
    [SUBSCRIBER_POISONED_KEY]: "kafka/e2e",
  };
  await producer.send({ topic: `${topic}.dlq`, messages: [{ value: JSON.stringify({ reviewId: uuid }), headers }] });
  await producer.disconnect();
  const r = (await send("POST", "/api/dlq/redrive", { uuids: [uuid], dryRun: false })) as { redriven: number };
  expect(r.redriven).toBe(1);
  return Date.now() / 1000;
}

/** Members of the handler's consumer group, as the admin API lists them. */
async function members(handler: string): Promise<number> {
  const d = await admin.describeGroups([handlerGroupId(service, handler)]);
  return d.groups[0]?.members.length ?? 0;
}

/** Marker times (unix s) of `kind` on the handler page's error chart whose hover text matches `title`. */
async function markerTimes(page: Page, kind: string, title: RegExp): Promise<number[]> {
  const marks = page.getByTestId("chart-error-rate").locator(`[data-testid="chart-marker"][data-kind="${kind}"]`);
  const all = await marks.evaluateAll((els) =>
    els.map((e) => ({ at: Number(e.getAttribute("data-at")), title: e.querySelector("title")?.textContent ?? "" })),
  );
  return all.filter((m) => title.test(m.title)).map((m) => m.at);
}

async function markersAtTheirTimes(firedAtSec: number): Promise<void> {
  // A fault toggle, then extra replicas joining the groups (a rebalance), timed from here.
  const faultAt = Date.now() / 1000;
  await put("/api/demo/faults", { latencyMs: 5 });
  const before = await members("on-review-created");
  await put("/api/demo/sources", { rebalance: { enabled: true, replicas: 1, periodMs: 20_000 } });
  await until("an extra replica joining the group", 30_000, async () => (await members("on-review-created")) > before);
  const joinedAt = Date.now() / 1000;
  await put("/api/demo/sources", { rebalance: { enabled: false } });
  const redrivenAt = await redriveOne();

  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = collectErrors(page);
  await page.goto(`${app.url}/handlers/${service}/on-review-created?range=15m&refresh=5s`);
  // The chart below the fold turns interactive when scrolled near. Scrolled by the DOM, not by
  // Playwright's scrollIntoViewIfNeeded: that waits for two animation frames with the same box,
  // which a loaded machine redrawing a page of live charts every refresh may not give within seconds.
  await until(
    "the error chart in view",
    20_000,
    async () =>
      (await page
        .getByTestId("chart-error-rate")
        .evaluate((el) => (el.scrollIntoView({ block: "center" }), true), undefined, { timeout: 2_000 })
        .catch(() => false)) || undefined,
  );
  // The rebalance is seen at the next scrape of the lag metrics (every 5 s).
  const rebalance = await until("a rebalance marker", 30_000, async () => {
    const t = await markerTimes(page, "rebalance", new RegExp(`Rebalance of ${service}\\.on-review-created`));
    return t.length ? t : undefined;
  });
  expect(
    rebalance.some((t) => t >= joinedAt - 10 && t <= joinedAt + 5.5),
    `rebalance markers ${rebalance} vs joined ${joinedAt}`,
  ).toBe(true);
  const fault = await markerTimes(page, "fault", /latencyMs=5/);
  expect(fault.length).toBe(1);
  expect(Math.abs(fault[0]! - faultAt)).toBeLessThan(2);
  const redrive = await markerTimes(
    page,
    "replay",
    /^.* — DLQ re-drive on on-review-created: 1 re-driven of 1 matched \(by local\)$/,
  );
  expect(redrive.length).toBe(1);
  expect(Math.abs(redrive[0]! - redrivenAt)).toBeLessThan(2);
  const firing = await markerTimes(page, "alert", /DedupRedisErrors\{.*reason="marshal".*\} firing/);
  expect(firing.length).toBe(1);
  expect(
    Math.abs(firing[0]! - firedAtSec),
    `firing marker ${firing[0]} vs Alertmanager's startsAt ${firedAtSec}`,
  ).toBeLessThanOrEqual(5);
  // The legend says what each mark means.
  const legend = (await page.getByTestId("chart-error-rate").getByTestId("marker-legend").textContent()) ?? "";
  expect(legend).toMatch(/alert pending \/ firing \/ resolved/);
  expect(legend).toMatch(/consumer-group rebalance/);
  expect(legend).toMatch(/demo store fault changed/);
  expect(legend).toMatch(/replay \/ re-drive/);
  await screenshot(page, "alertmanager-markers");
  expect(errors).toEqual([]);
  await page.close();
}
