/**
 * The dashboard as its own service beside a fleet of other processes, as deployed: the built app with
 * `DEMO=off` and, each scraped every second by a Prometheus of the test's own (the project's rules,
 * DedupDuplicateRateHigh's `for` cut to 5 s), two `npm run worker` processes of one Node service, the
 * Java reference consumer (examples/java-consumer, its group declared apart from `<service>.<handler>`)
 * and three handlers of a consumer that follows the design note literally (plain "1" marked before the
 * handler, server/testing/marks-before-consumer.ts). The fleet table lists the three services; each
 * handler page shows its declared setup, lint, lag by its declared group, the latency split or "not
 * known"; a 500-copy storm sent to both worker processes is the top hot UUID with the sum of both
 * processes' counts; the key browser and the UUID lookup find every service's keys with their state;
 * DedupDuplicateRateHigh fires for the Java service in Prometheus and on its page.
 * Screenshots: fleet-processes-table, fleet-processes-java.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kafka, logLevel, type Producer } from "kafkajs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlerSelfResponseSchema } from "@/lib/api/handlers";
import { hotKeysResponseSchema } from "@/lib/api/hot-keys";
import { overviewResponseSchema } from "@/lib/api/overview";
import { seriesResponseSchema } from "@/lib/api/series";
import { ALERT_NAMES } from "@/lib/thresholds";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { DEMO_PARTITIONS, demoGroupIds } from "@/server/notification/demo-handlers";
import { startJavaConsumer, startProcess, type RunningConsumer } from "@/server/testing/java-consumer";
import { startMarksBeforeConsumer, type MarksBeforeConsumer } from "@/server/testing/marks-before-consumer";
import { freePort } from "@/server/testing/net";
import { promAlerts, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { KafkaTransport } from "@/server/transport";
import { launchBrowser, REAL_ENV, ROOT, screenshot, startApp, until, withPage, type App } from "./harness";

const tag = randomBytes(3).toString("hex");
const NODE = `fl${tag}n`;
const JAVA = `fl${tag}j`;
const NOTE = `fl${tag}m`;
const NODE_TOPIC = `${NODE}.events`;
const JAVA_TOPIC = `${JAVA}.orders`;
const NOTE_TOPIC = `${NOTE}.signups`;
const JAVA_HANDLER = "on-order";
const JAVA_GROUP = `${JAVA}-billing`;
const NOTE_HANDLERS = ["on-signup", "on-refund", "on-login"];
const STORM = randomUUID();
const COPIES = 500;

const up: {
  workers: RunningConsumer[];
  java?: RunningConsumer;
  notes: MarksBeforeConsumer[];
  prom?: OwnPrometheus;
  app?: App;
  browser?: Browser;
  producer?: Producer;
} = { workers: [], notes: [] };
const ruleDir = mkdtempSync(join(tmpdir(), "fleet-processes-rules-"));
const app = () => up.app!;
const browser = () => up.browser!;

/** The project's rules with DedupDuplicateRateHigh's `for` cut to 5 s (the alert's own expression and texts kept). */
function fastRules(): string {
  const rules = readFileSync(join(ROOT, "infra/prometheus/rules/dedup.yml"), "utf8");
  const forAt = rules.indexOf("for: ", rules.indexOf(`alert: ${ALERT_NAMES.duplicateRate}`));
  const file = join(ruleDir, "rules.yml");
  writeFileSync(file, rules.slice(0, forAt) + "for: 5s" + rules.slice(rules.indexOf("\n", forAt)));
  return file;
}

/** One `npm run worker` of the Node service: its own process group, its own /metrics. */
async function startWorker(name: string): Promise<RunningConsumer> {
  const port = await freePort();
  const env = {
    KAFKA_BROKERS: REAL_ENV.KAFKA_BROKERS,
    REDIS_URL: REAL_ENV.REDIS_URL,
    DATABASE_URL: "",
    SERVICE_NAME: NODE,
    DEMO_TOPIC: NODE_TOPIC,
  };
  return startProcess(
    "npx",
    ["tsx", "scripts/worker.ts", "--name", name, "--metrics-port", String(port)],
    env,
    /consuming .* from /,
    `http://127.0.0.1:${port}/metrics`,
    90_000,
  );
}

const record = (uuid: string, extra: Record<string, string> = {}, value = "{}") => ({
  value,
  headers: { [WATERMILL_UUID_HEADER]: uuid, ...extra },
});

async function getJson(path: string): Promise<unknown> {
  const res = await fetch(`${app().url}${path}`, { signal: AbortSignal.timeout(15_000) });
  return res.json();
}

/** The storm UUID's copies as one process exports them (`dedup_hot_uuid_copies`), 0 when it lists none. */
async function exportedCopies(w: RunningConsumer): Promise<number> {
  const text = await (await fetch(w.metricsUrl)).text();
  const line = text.split("\n").find((l) => l.startsWith("dedup_hot_uuid_copies{") && l.includes(`uuid="${STORM}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

beforeAll(async () => {
  const transport = new KafkaTransport([REAL_ENV.KAFKA_BROKERS]);
  await transport.createTopics([
    { name: NODE_TOPIC, partitions: DEMO_PARTITIONS },
    { name: JAVA_TOPIC, partitions: 2 },
    { name: NOTE_TOPIC, partitions: 1 },
  ]);
  await transport.close();
  const brokers = [REAL_ENV.KAFKA_BROKERS];
  const [a, b, java, ...notes] = await Promise.all([
    startWorker(`${NODE}-a`),
    startWorker(`${NODE}-b`),
    startJavaConsumer({
      brokers,
      redisUrl: REAL_ENV.REDIS_URL,
      topic: JAVA_TOPIC,
      service: JAVA,
      handler: JAVA_HANDLER,
      env: { GROUP: JAVA_GROUP },
    }),
    ...NOTE_HANDLERS.map((handler) =>
      startMarksBeforeConsumer({ brokers, redisUrl: REAL_ENV.REDIS_URL, topic: NOTE_TOPIC, service: NOTE, handler }),
    ),
  ]);
  up.workers = [a!, b!];
  up.java = java as RunningConsumer;
  up.notes = notes as MarksBeforeConsumer[];
  const targets = [a!, b!, up.java, ...up.notes].map((c) => new URL(c.metricsUrl).host);
  // The dashboard is scraped too, as deployed: it exports the lag of every group the fleet declares.
  const appPort = await freePort();
  up.prom = await startOwnPrometheus({
    targets,
    ruleFiles: [fastRules()],
    intervalSec: 1,
    more: [{ job: "dashboard", targets: [`127.0.0.1:${appPort}`], metricsPath: "/api/metrics" }],
  });
  up.app = await startApp({
    port: appPort,
    env: { ...REAL_ENV, DEMO: "off", PROMETHEUS_URL: up.prom.url, DEDUP_PREFIXES: `fl${tag}*:dedup:*` },
  });
  up.browser = await launchBrowser();
  up.producer = new Kafka({ clientId: `fleet-${tag}`, brokers, logLevel: logLevel.NOTHING }).producer();
  await up.producer.connect();
}, 150_000);

afterAll(async () => {
  await up.producer?.disconnect();
  await up.browser?.close();
  await up.app?.stop();
  await up.prom?.stop();
  await Promise.all([...up.workers.map((w) => w.stop()), up.java?.stop(), ...up.notes.map((n) => n.stop())]);
  rmSync(ruleDir, { recursive: true, force: true });
  const redis = createDedupRedis({ url: REAL_ENV.REDIS_URL });
  for (const service of [NODE, JAVA, NOTE]) await deleteKeysByPrefix(redis, service);
  redis.disconnect();
  const transport = new KafkaTransport([REAL_ENV.KAFKA_BROKERS]);
  await transport.deleteGroups([...demoGroupIds(NODE), JAVA_GROUP, ...NOTE_HANDLERS.map((h) => `${NOTE}.${h}`)]);
  await transport.deleteTopics([
    NODE_TOPIC,
    `${NODE_TOPIC}.dlq`,
    JAVA_TOPIC,
    `${JAVA_TOPIC}.dlq`,
    NOTE_TOPIC,
    `${NOTE_TOPIC}.dlq`,
  ]);
  await transport.close();
}, 60_000);

describe("a fleet of processes: two Node workers, the Java consumer, a design-note consumer", () => {
  const fresh = {
    node: [randomUUID(), randomUUID(), randomUUID()],
    java: Array.from({ length: 40 }, () => randomUUID()),
    note: Array.from({ length: 5 }, () => randomUUID()),
  };

  it("both workers share the Node service's groups; traffic reaches every process", async () => {
    // Both worker processes hold partitions of on-page-viewed's group before the storm, so its copies reach both.
    const self = await until("two members in on-page-viewed's group", 60_000, async () => {
      const s = handlerSelfResponseSchema.parse(await getJson(`/api/handlers/${NODE}/on-page-viewed`));
      return s.consumerGroup.status === "ok" &&
        s.consumerGroup.view.members.length === 2 &&
        s.consumerGroup.view.unassigned.length === 0
        ? s
        : undefined;
    });
    expect(self.group.id).toBe(`${NODE}.on-page-viewed`);
    const p = up.producer!;
    await p.send({
      topic: NODE_TOPIC,
      messages: ["review.created", "user.banned", "page.viewed"].map((t, i) =>
        record(fresh.node[i]!, { "Event-Type": t }),
      ),
    });
    // The storm: one page.viewed UUID, 500 copies over all six partitions (three per worker process).
    const copies = Array.from({ length: COPIES }, (_, i) => ({
      ...record(STORM, { "Event-Type": "page.viewed" }),
      partition: i % DEMO_PARTITIONS,
    }));
    for (let i = 0; i < copies.length; i += 100)
      await p.send({ topic: NODE_TOPIC, messages: copies.slice(i, i + 100) });
    // The Java service: 40 UUIDs, 20 of them sent twice (a third of what it sees is a copy).
    await p.send({
      topic: JAVA_TOPIC,
      messages: [...fresh.java, ...fresh.java.slice(0, 20)].map((u) => record(u, {}, JSON.stringify({ order: u }))),
    });
    await p.send({ topic: NOTE_TOPIC, messages: fresh.note.map((u) => record(u, {}, "{}")) });
    // Each worker process swallowed part of the storm and exports its share.
    const shares = await until("both workers exporting the storm's copies", 60_000, async () => {
      const s = await Promise.all(up.workers.map(exportedCopies));
      return s.every((n) => n > 0) && s[0]! + s[1]! >= COPIES - 10 ? s : undefined;
    });
    expect(shares[0]! + shares[1]!).toBeLessThanOrEqual(COPIES);
  }, 120_000);

  it("the fleet table lists the three services, and the API every handler of them", async () => {
    const ids = [
      ...["on-review-created", "on-user-banned", "on-page-viewed"].map((h) => `${NODE}/${h}`),
      `${JAVA}/${JAVA_HANDLER}`,
      ...NOTE_HANDLERS.map((h) => `${NOTE}/${h}`),
    ];
    await until("every handler of the fleet in /api/overview", 60_000, async () => {
      const o = overviewResponseSchema.parse(await getJson("/api/overview?range=15m"));
      return ids.every((id) =>
        o.handlers.some((h) => `${h.service}/${h.handler}` === id && h.scrape?.status === "live"),
      );
    });
    await withPage(browser(), { viewport: { width: 1400, height: 1000 } }, async (page) => {
      await page.goto(`${app().url}/?range=15m&refresh=off`);
      await page.getByTestId("fleet-table").waitFor({ timeout: 30_000 });
      const rows = await page
        .getByTestId("fleet-row")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-handler")));
      expect(rows.sort()).toEqual([...ids].sort());
      await page.getByTestId("mode").waitFor();
      const services = await page.getByTestId("fleet-service").locator("option").allTextContents();
      for (const s of [NODE, JAVA, NOTE])
        expect(
          services.some((o) => o.includes(s)),
          s,
        ).toBe(true);
      await screenshot(page, "fleet-processes-table");
    });
  }, 90_000);

  it("the storm is the Node handler's top hot UUID with the sum of both processes' counts", async () => {
    const shares = await Promise.all(up.workers.map(exportedCopies));
    const sum = shares[0]! + shares[1]!;
    const hot = await until("the storm's fleet count in /api/hot-keys", 30_000, async () => {
      const h = hotKeysResponseSchema.parse(await getJson(`/api/hot-keys?service=${NODE}&handler=on-page-viewed`));
      return h.keys[0]?.uuid === STORM && h.keys[0].count === sum ? h : undefined;
    });
    expect(hot.scope).toBe("fleet");
    expect(hot.sketches).toBe(2);
    await withPage(browser(), { viewport: { width: 1400, height: 1000 } }, async (page) => {
      await page.goto(`${app().url}/handlers/${NODE}/on-page-viewed?range=15m&refresh=off`);
      const panel = page.getByTestId("hot-keys");
      await until("the hot UUIDs panel", 20_000, async () => {
        await page.mouse.wheel(0, 400);
        return (await panel.count()) > 0;
      });
      const first = panel.getByTestId("hot-key").first();
      await first.waitFor({ timeout: 20_000 });
      expect(await first.getAttribute("data-uuid")).toBe(STORM);
      expect(((await first.getByTestId("hot-key-count").textContent()) ?? "").replace(/[\s,\u202f]/g, "")).toMatch(
        new RegExp(`^${sum}(±|$)`),
      );
      expect(await panel.getByTestId("hot-keys-total").textContent()).toMatch(/fleet: .*\(2 processes\)/);
    });
  }, 60_000);

  /** The handler page's declared setup, lint, latency split and consumer group of one handler. */
  async function checkHandlerPage(
    page: Page,
    service: string,
    handler: string,
    want: { ttl: RegExp; group: string; finding?: string },
  ): Promise<void> {
    await page.goto(`${app().url}/handlers/${service}/${handler}?range=15m&refresh=off`);
    await expect
      .poll(() => page.getByTestId("stat-p99").first().textContent(), { timeout: 30_000 })
      .toMatch(/not known for this runtime|Redis|runtime|event loop|GC|unexplained/i);
    const self = page.getByTestId("handler-self");
    await self.scrollIntoViewIfNeeded();
    await expect
      .poll(() => self.getByTestId("self-declaration").textContent(), { timeout: 20_000 })
      .toMatch(/dedup_handler_info \((node|jvm)/);
    expect(await self.getByTestId("self-ttl").textContent(), `${service} TTL`).toMatch(want.ttl);
    // The window: how old the keys are against their TTL and until when the projection extrapolates,
    // or why that is not known yet (a fleet started seconds ago).
    expect(await self.getByTestId("self-window").textContent()).toMatch(
      /keys \d.* old \((oldest key|since process start)[^)]*\)[^:]*: until .* the projection extrapolates|unknown: no settled key sampled yet/,
    );
    expect(await self.getByTestId("self-lease").textContent()).not.toBe("");
    const group = self.getByTestId("self-consumer-group");
    expect(await group.getAttribute("data-status")).toBe("ok");
    expect(await group.textContent()).toMatch(new RegExp(`Consumer group ${want.group}.*lag \\d`));
    const lint = page.getByTestId("lint");
    await lint.scrollIntoViewIfNeeded();
    // The lint runs on what it declares (read from Prometheus), not "not declared by this app".
    if (want.finding)
      await expect
        .poll(() => lint.getByTestId("finding").allTextContents(), { timeout: 20_000 })
        .toEqual(expect.arrayContaining([expect.stringContaining(want.finding)]));
    else await expect.poll(() => lint.textContent(), { timeout: 20_000 }).toMatch(/Declared setup: no finding/);
  }

  it("each handler page shows its declared setup, lint, latency split and consumer group by the declared group", async () => {
    await withPage(browser(), { viewport: { width: 1400, height: 1000 } }, async (page) => {
      await checkHandlerPage(page, NODE, "on-user-banned", {
        ttl: /critical \(declared/,
        group: `${NODE}.on-user-banned`,
      });
      await checkHandlerPage(page, JAVA, JAVA_HANDLER, { ttl: /default \(declared/, group: JAVA_GROUP });
      // Its lag chart: the dashboard's exported lag of the group it declares, read back from Prometheus.
      const lag = await until("the Java handler's lag by its declared group in /api/series", 30_000, async () => {
        const r = seriesResponseSchema.parse(
          await getJson(`/api/series?metric=consumer_lag&service=${JAVA}&handler=${JAVA_HANDLER}&range=15m`),
        );
        return r.data.status === "ok" && r.data.series.length > 0 ? r.data.series : undefined;
      });
      // Joined through the info: its group is not <service>.<handler>, the only name the lag had otherwise.
      expect(lag.map((l) => `${l.labels.service}/${l.labels.handler}`)).toContain(`${JAVA}/${JAVA_HANDLER}`);
      const chart = page.getByTestId("chart-consumer-lag");
      await until("the lag chart in view", 20_000, async () => {
        await page.mouse.wheel(0, 400);
        return (await chart.count()) > 0;
      });
      await chart.scrollIntoViewIfNeeded();
      await expect.poll(() => chart.textContent(), { timeout: 20_000 }).not.toMatch(/no lag exported|not measured/);
      await checkHandlerPage(page, NOTE, NOTE_HANDLERS[0]!, {
        ttl: /default.*inferred/,
        group: `${NOTE}.${NOTE_HANDLERS[0]}`,
        finding: "marking-before-handler",
      });
    });
  }, 90_000);

  it("the key browser lists each service's keys with their states, and the UUID lookup finds them", async () => {
    await withPage(browser(), { viewport: { width: 1400, height: 1000 } }, async (page) => {
      for (const [prefix, uuid, state] of [
        [`${NODE}:dedup:on-review-created`, fresh.node[0]!, "done"],
        [`${JAVA}:dedup:${JAVA_HANDLER}`, fresh.java[0]!, "done"],
        [`${NOTE}:dedup:${NOTE_HANDLERS[1]}`, fresh.note[0]!, "marked"],
      ] as const) {
        await page.goto(`${app().url}/keys?prefix=${encodeURIComponent(prefix)}&refresh=off`);
        const row = page.getByTestId("key-pages").getByTestId("key-row").filter({ hasText: uuid });
        await row.waitFor({ timeout: 30_000 });
        expect(await row.locator("td").nth(1).textContent(), prefix).toBe(state);
        await page.goto(`${app().url}/keys?uuid=${uuid}&refresh=off`);
        const found = page.getByTestId("key-lookup").getByTestId("key-row");
        await found.first().waitFor({ timeout: 30_000 });
        const rows = await found.allTextContents();
        expect(
          rows.some((r) => r.includes(prefix) && r.includes(state)),
          `${uuid} under ${prefix}: ${rows.join(" | ")}`,
        ).toBe(true);
      }
    });
  }, 90_000);

  it("DedupDuplicateRateHigh fires for the Java service in Prometheus and on its page", async () => {
    await until("DedupDuplicateRateHigh firing for the Java service in Prometheus", 60_000, async () =>
      (await promAlerts(up.prom!.url)).some(
        (a) => a.labels.alertname === ALERT_NAMES.duplicateRate && a.labels.service === JAVA && a.state === "firing",
      ),
    );
    await withPage(browser(), { viewport: { width: 1400, height: 1000 } }, async (page) => {
      await page.goto(`${app().url}/handlers/${JAVA}/${JAVA_HANDLER}?range=15m&refresh=off`);
      const now = page.getByTestId("handler-now");
      const alert = now.locator("li", { hasText: ALERT_NAMES.duplicateRate });
      await alert.waitFor({ timeout: 30_000 });
      expect(await alert.getByTestId("alert-state").getAttribute("data-state")).toBe("firing");
      expect(await now.getByTestId("stat-ratio").first().textContent()).toMatch(/3\d(\.\d+)?%/);
      await screenshot(page, "fleet-processes-java");
    });
  }, 90_000);
});
