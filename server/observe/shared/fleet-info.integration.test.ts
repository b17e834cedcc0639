/**
 * The dashboard reads what a consumer it does not run declares: a real Prometheus scrapes a small
 * exporter of `dedup_handler_info` for foreign services (a JVM-style consumer, one that follows
 * the design note literally, and one that exports only metrics), nothing is registered in this
 * process, and the handler answer, the lint and the capacity projection show what each declares,
 * infer what can be inferred and say so, say "unknown" with the signal for the rest, and join the
 * lag of a real consumer group on real Kafka by the group the info names (not `<service>.<handler>`).
 */
import { createServer, type Server } from "node:http";
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from "kafkajs";
import { Registry } from "prom-client";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlerSelfResponseSchema, type HandlerSelfResponse } from "@/lib/api/handlers";
import { lintResponseSchema } from "@/lib/api/lint";
import { capacityResponseSchema } from "@/lib/api/capacity";
import { parseConfig, type AppConfig } from "@/server/config";
import { freePort } from "@/server/testing/net";
import { ownKafka } from "@/server/testing/own-kafka";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { fakeUlid, seedKeys } from "@/server/testing/seed-keys";
import { browseKeys, lookupKey } from "../routes/keys";
import { getCapacity } from "../routes/capacity";
import { ConsumerGroupDescriber } from "../kafka/consumer-group";
import { LagMetrics, lagTopics } from "../watchers/lag-metrics";
import { createObserveContext, type ObserveContext } from "../context";
import { clearDeclaredHandlers, declaredHandlers } from "../core/handler-registry";
import { getHandlerSelf } from "../routes/handlers-self";
import { getLint } from "../routes/lint";
import { PrometheusSource } from "../metrics/prometheus";
import { createObserveRedis, type RedisLike } from "../redis/client";

const tag = randomBytes(3).toString("hex");
const JVM = `acmebill${tag}`;
const NOTE = `acmenote${tag}`;
const PLAIN = `acmeplain${tag}`;
const STACK = "correlationId,recoverer,poisonQueue,retry,deduplicator";
const own = ownKafka();
const GROUP = own.group("billing-workers");

let topic = "";
let redis: OwnRedis | undefined;
let client: RedisLike | undefined;
let prom: OwnPrometheus | undefined;
let exporter: Server | undefined;
let consumer: Consumer | undefined;
let producer: Producer | undefined;
let admin: Admin | undefined;
let ctx: ObserveContext;
const saved = (globalThis as { __dedupHealthConfig?: AppConfig }).__dedupHealthConfig;

/** What the foreign consumers export: only text, as a Java or Go service would. */
function exposition(): string {
  const info = (l: Record<string, string>) =>
    `dedup_handler_info{${Object.entries(l)
      .map(([k, v]) => `${k}="${v}"`)
      .join(",")}} 1`;
  return [
    "# TYPE dedup_handler_info gauge",
    // A JVM consumer: every field declared; its attempt limit is not below its lease.
    info({
      service: JVM,
      handler: "charge",
      topic,
      group: GROUP,
      prefix: `${JVM}:dedup:charge`,
      ttl_ms: "604800000",
      ttl_class: "critical",
      lease_ms: "30000",
      timeout_ms: "45000",
      marking: "lease",
      failure_mode: "closed",
      stack: STACK,
      runtime: "jvm",
      contract: "1",
    }),
    // The design note followed literally: SET key "1" NX PX 24h before the handler, no lease, no class.
    info({
      service: NOTE,
      handler: "notify",
      topic: "note.events",
      prefix: `${NOTE}:dedup:notify`,
      ttl_ms: "86400000",
      marking: "before",
      failure_mode: "open",
      stack: STACK,
      runtime: "jvm",
      contract: "1",
    }),
    "# TYPE messages_processed_total counter",
    `messages_processed_total{service="${PLAIN}",topic="plain.events",handler="h",result="success"} 5`,
    `messages_processed_total{service="${PLAIN}",topic="plain.events",handler="bare",result="success"} 5`,
    "",
  ].join("\n");
}

const self = async (service: string, handler: string): Promise<HandlerSelfResponse> =>
  handlerSelfResponseSchema.parse(await getHandlerSelf(ctx, service, handler));

beforeAll(async () => {
  clearDeclaredHandlers();
  ({
    names: [topic = ""],
  } = await own.topics("fleet-info", { "": 3 }));
  (globalThis as { __dedupHealthConfig?: AppConfig }).__dedupHealthConfig = parseConfig({
    KAFKA_BROKERS: own.brokers.join(","),
    SERVICE_NAME: "dashboard",
    CONSUMER_DETAILS: "all",
  });

  // A real consumer group with a name of its own: 10 records, 4 committed, then paused (still a member).
  const kafka = new Kafka({ clientId: "fleet-info-test", brokers: [...own.brokers], logLevel: logLevel.NOTHING });
  producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `{"i":${i}}` })),
  });
  consumer = kafka.consumer({ groupId: GROUP });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  const committed = new Promise<void>((resolve) => {
    void consumer!.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        if (++seen > 4) return;
        await consumer!.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
        if (seen === 4) {
          consumer!.pause([{ topic }]);
          resolve();
        }
      },
    });
  });
  await committed;

  // Keys of the handler that declares nothing: every one lives 24 h.
  redis = await startOwnRedis();
  const seed = new Redis(redis.url);
  await seedKeys(seed, [
    { prefix: `${PLAIN}:dedup:h`, count: 50, ttlMs: 86_400_000, value: "1" },
    { prefix: `${JVM}:dedup:charge`, count: 1, ttlMs: 604_800_000, value: "1", offset: 100 },
  ]);
  seed.disconnect();
  client = createObserveRedis({ url: redis.url }, { maxReconnectDelayMs: 200 });

  const port = await freePort();
  // The dashboard's own consumer-group lag, over the topics the fleet declares (none is configured here).
  admin = kafka.admin();
  await admin.connect();
  const describer = new ConsumerGroupDescriber(admin);
  const lagRegistry = new Registry();
  new LagMetrics(
    lagRegistry,
    () => lagTopics([]),
    (t) => describer.read({ topic: t }),
  );
  exporter = createServer((_req, res) => {
    void lagRegistry.metrics().then((lag) => {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
      res.end(exposition() + lag);
    });
  });
  await new Promise<void>((r) => exporter!.listen(port, "127.0.0.1", r));
  prom = await startOwnPrometheus({ targets: [`127.0.0.1:${port}`], ruleFiles: [], intervalSec: 1 });
  ctx = createObserveContext({
    metrics: new PrometheusSource(prom.url, { cacheTtlMs: 0 }),
    redis: client,
    prefixes: [`${PLAIN}:dedup:*`, `${JVM}:dedup:*`, `${NOTE}:dedup:*`],
    answerTtlMs: 0,
  });
  ctx.inspector?.ensureFresh();
  // Until Prometheus has scraped the exporter and the inspector has counted the keys.
  for (const end = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 300))) {
    const s = await self(PLAIN, "h");
    // (its topic comes from a rate of its counter: two scrapes are needed)
    if (
      s.declaration.status === "unknown" &&
      s.ttl.status === "ok" &&
      s.topic.status === "ok" &&
      (await self(JVM, "charge")).declaration.status === "ok"
    )
      break;
    if (Date.now() > end)
      throw new Error("Prometheus did not scrape the exporter, or the keys were not counted, within 30 s");
  }
}, 90_000);

afterAll(async () => {
  await consumer?.disconnect().catch(() => undefined);
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  const g = globalThis as { __dedupHealthConsumers?: { admin: { disconnect(): Promise<void> } } };
  await g.__dedupHealthConsumers?.admin.disconnect().catch(() => undefined);
  delete g.__dedupHealthConsumers;
  (globalThis as { __dedupHealthConfig?: AppConfig }).__dedupHealthConfig = saved;
  await prom?.stop();
  await new Promise((r) => exporter?.close(r));
  client?.disconnect();
  await redis?.stop();
  clearDeclaredHandlers();
}, 30_000);

describe("a foreign consumer's dedup_handler_info, read from Prometheus", () => {
  it("shows what it declares: TTL class and window, lease, attempt limit, the lint of them, and its prefix for lookups", async () => {
    const s = await self(JVM, "charge");
    expect(s.declaration).toEqual({ status: "ok", source: "info", runtime: "jvm", contract: "1" });
    expect(s.ttl).toMatchObject({
      status: "ok",
      ms: 604_800_000,
      msSource: "declared",
      ttlClass: "critical",
      classSource: "declared",
    });
    expect(s.lease).toMatchObject({ status: "ok", ms: 30_000 });
    expect(s.timeout).toEqual({ status: "ok", ms: 45_000 });
    expect(s.marking).toEqual({ status: "ok", value: "lease" });
    expect(s.failureMode).toEqual({ status: "ok", value: "closed" });
    expect(s.prefix).toEqual({ value: `${JVM}:dedup:charge`, source: "declared" });
    expect(s.lint.status === "ok" && s.lint.findings.map((f) => f.rule)).toEqual(["timeout-not-below-lease"]);
    // Not registered here, yet the UUID lookup and the key browser know its prefix.
    expect(declaredHandlers().find((d) => d.service === JVM)).toMatchObject({
      source: "info",
      prefix: `${JVM}:dedup:charge`,
      groupId: GROUP,
    });
  });

  it("joins the lag of its real consumer group by the group it declares, with the group's members and partitions", async () => {
    const s = await self(JVM, "charge");
    expect(s.group).toEqual({ id: GROUP, source: "declared" });
    expect(s.consumerGroup.status).toBe("ok");
    if (s.consumerGroup.status !== "ok") return;
    expect(s.consumerGroup.topic).toBe(topic);
    expect(s.consumerGroup.view.groupId).toBe(GROUP);
    expect(s.consumerGroup.view.totalLag).toBe(6);
    expect(s.consumerGroup.view.members).toHaveLength(1);
    expect(s.consumerGroup.view.members[0]!.partitions).toEqual([0, 1, 2]);
  });

  it("the lag chart's query joins the group's lag to the handler that declares it, though the group is not <service>.<handler>", async () => {
    let value: number | null | undefined;
    for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
      value = (await ctx.metrics.instant("consumer_lag")).find(
        (x) => x.labels.service === JVM && x.labels.handler === "charge" && x.labels.topic === topic,
      )?.value;
      if (value !== undefined) break;
    }
    expect(value).toBe(6);
  });

  it("flags a consumer that follows the design note literally for what spec §10 says it loses, and infers its class from its window, saying so", async () => {
    const s = await self(NOTE, "notify");
    expect(s.ttl).toMatchObject({ status: "ok", ms: 86_400_000, ttlClass: "default", classSource: "inferred" });
    expect(s.ttl.status === "ok" && s.ttl.text).toContain("inferred");
    expect(s.lease).toMatchObject({ status: "ok", ms: null });
    expect(s.marking).toEqual({ status: "ok", value: "before" });
    const findings = s.lint.status === "ok" ? s.lint.findings : [];
    const before = findings.find((f) => f.rule === "marking-before-handler");
    expect(before).toMatchObject({ severity: "error", specSection: "§10" });
    expect(before?.message).toMatch(/retry after a failed attempt/);
    expect(before?.message).toMatch(/crash mid-handler/);
    expect(findings.map((f) => f.rule)).toContain("no-lease");
    // Its group is not declared: the convention is used and said to be one.
    expect(s.group).toEqual({ id: `${NOTE}.notify`, source: "convention" });
  });

  it("a handler without info gets what its metrics and keys allow, and says which parts are unknown and why", async () => {
    const s = await self(PLAIN, "h");
    expect(s.declaration).toEqual({
      status: "unknown",
      needs: "dedup_handler_info",
      detail: "declares nothing: export dedup_handler_info",
    });
    // Inferred from the keys' TTLs, and said so.
    expect(s.ttl).toMatchObject({ status: "ok", msSource: "observed", ttlClass: "default", classSource: "inferred" });
    expect(s.ttl.status === "ok" && s.ttl.text).toMatch(/^default, inferred: keys live 2\d(\.\d)? h$/);
    // The topic from its metrics' label.
    expect(s.topic).toEqual({ status: "ok", value: "plain.events", source: "metrics" });
    for (const f of [s.lease, s.marking, s.failureMode, s.stack, s.lint])
      expect(f).toMatchObject({ status: "unknown", needs: expect.stringContaining("dedup_handler_info") });
    expect(s.lease.status === "unknown" && s.lease.detail).toBe("declares no lease: export dedup_handler_info");

    const bare = await self(PLAIN, "bare");
    expect(bare.ttl).toEqual({
      status: "unknown",
      needs: "dedup_handler_info (ttl_ms)",
      detail: "declares no TTL: export dedup_handler_info",
    });
    expect(bare.window.status).toBe("unknown");
  });

  it("a key without a position links to a UUID search in its handler's topic: declared, else its metrics' topic label", async () => {
    const page = await browseKeys(ctx, { prefix: `${PLAIN}:dedup:h`, count: 10 });
    expect(page.keys.length).toBeGreaterThan(0);
    for (const k of page.keys) expect(k).toMatchObject({ state: "marked", record: null, topic: "plain.events" });
    const found = await lookupKey(ctx, { uuid: fakeUlid(100) });
    expect(found.matches.map((m) => [m.prefix, m.topic])).toEqual([[`${JVM}:dedup:charge`, topic]]);
  });

  it("/api/lint lints every handler of the fleet from its info, and the capacity projection uses the declared window", async () => {
    const lint = lintResponseSchema.parse(await getLint(ctx));
    const declared = lint.declared.status === "ok" ? lint.declared.handlers : [];
    expect(declared.find((h) => h.service === JVM)).toMatchObject({
      source: "info",
      ttlClass: "critical",
      ttlMs: 604_800_000,
      leaseMs: 30_000,
    });
    expect(declared.find((h) => h.service === NOTE)).toMatchObject({ source: "info", ttlClass: null, leaseMs: null });
    expect(declared.find((h) => h.service === NOTE)?.unknown).toContain(
      "declares no TTL class: inferred default from ttl_ms (ttl_class)",
    );
    const cap = capacityResponseSchema.parse(await getCapacity(ctx));
    expect(cap.handlers.find((h) => h.service === JVM)).toMatchObject({ ttlMs: 604_800_000, ttlSource: "declared" });
  });
});
