/**
 * `npm run conformance` against three real consumers on the shared Kafka and Redis: the Java
 * reference consumer and the library's own worker keep every clause; a consumer that follows the
 * design note literally (marks before its handler, never releases) is told which clauses it breaks.
 */
import { execFile } from "node:child_process";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, describe, expect, it } from "vitest";
import { ownKafka } from "@/server/testing/own-kafka";
import { startJavaConsumer, startProcess, type RunningConsumer } from "@/server/testing/java-consumer";
import { startMarksBeforeConsumer } from "@/server/testing/marks-before-consumer";
import { freePort } from "@/server/testing/net";
import { kcatFormat, kcatProduce } from "@/server/testing/kcat";
import { CLAUSES } from "./lib/conformance/clauses";
import { until } from "./lib/conformance/evidence";
import { scrape } from "./lib/conformance/exposition";

const k = ownKafka();
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const running: RunningConsumer[] = [];
const groups: string[] = [];

afterAll(async () => {
  for (const r of running) await r.stop();
  // A group whose last member left a moment ago may still answer "not empty": asked again until gone.
  const admin = new Kafka({ brokers: [...k.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await until(async () => {
    const left = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
    const ours = groups.filter((g) => left.has(g));
    for (const g of ours) await admin.deleteGroups([g]).catch(() => undefined);
    return ours.length === 0;
  }, 15_000);
  await admin.disconnect();
});

/** Runs the command line as a user would; resolves its exit code and output. */
function conformance(args: Record<string, string>, extra: string[] = []): Promise<{ code: number; out: string }> {
  const argv = ["scripts/conformance.ts", ...Object.entries(args).flatMap(([n, v]) => [`--${n}`, v]), ...extra];
  return new Promise((resolve) => {
    execFile("node_modules/.bin/tsx", argv, { timeout: 100_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

/** The clause lines of a report: name → `held` / `BROKEN` / `n/m`. */
function verdicts(out: string): Map<string, string> {
  const names = new Set(CLAUSES.map((c) => c.name));
  const m = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [mark, name] = line.trim().split(/\s+/);
    if (name && names.has(name)) m.set(name, mark!);
  }
  return m;
}

function expectAllHeld(out: string): void {
  const v = verdicts(out);
  expect([...v.keys()], out).toEqual(CLAUSES.map((c) => c.name));
  expect(
    [...v].filter(([, mark]) => mark !== "held"),
    out,
  ).toEqual([]);
}

describe("npm run conformance", () => {
  it("the Java reference consumer keeps every clause of the contract", async () => {
    const { names, id } = await k.topics("conf-java", { "": 1, ".dlq": 1 });
    const [topic] = names as [string];
    const service = `conf-java-${id}`;
    const group = k.group("conf-java");
    k.forget(`${service}:effects`);
    const java = await startJavaConsumer({
      brokers: k.brokers,
      redisUrl: REDIS_URL,
      topic,
      service,
      handler: "on-event",
      env: { GROUP: group },
    });
    running.push(java);
    const { code, out } = await conformance({
      metrics: java.metricsUrl,
      redis: REDIS_URL,
      brokers: k.brokers.join(","),
      topic,
      service,
      handler: "on-event",
    });
    expectAllHeld(out);
    expect(code, out).toBe(0);
    // The handler's own side effect: once per processed UUID (3 fresh + the one that failed first), never for a copy.
    expect(await k.redis.llen(`${service}:effects`)).toBe(4);
  });

  it('the Java consumer fails a record with "fail": true on every attempt, releasing its claim each time, then sends it to the DLQ; the same UUID without it runs once', async () => {
    const { names, id } = await k.topics("conf-javafail", { "": 1, ".dlq": 1 });
    const [topic, dlq] = names as [string, string];
    const service = `conf-javafail-${id}`;
    const key = `${service}:dedup:on-event:fails-1`;
    k.forget(`${service}:effects`, key);
    const java = await startJavaConsumer({
      brokers: k.brokers,
      redisUrl: REDIS_URL,
      topic,
      service,
      handler: "on-event",
      env: { GROUP: k.group("conf-javafail"), MAX_ATTEMPTS: "3" },
    });
    running.push(java);
    const w = { service, handler: "on-event" };
    const brokers = k.brokers.join(",");
    await kcatProduce(brokers, topic, 0, JSON.stringify({ fail: true }), { _watermill_message_uuid: "fails-1" });
    expect(
      await until(
        async () =>
          ((await scrape(java.metricsUrl)).sum("messages_poisoned_total", { ...w, reason_poisoned: "handler_error" }) ??
            0) === 1,
        20_000,
      ),
    ).toBe(true);
    const after = await scrape(java.metricsUrl);
    expect(after.sum("deduplication_released_total", w)).toBe(3);
    expect(after.sum("handler_execution_time_seconds_count", { ...w, success: "false" })).toBe(3);
    expect(await k.redis.exists(key)).toBe(0);
    expect(await k.redis.llen(`${service}:effects`)).toBe(0);
    const dlqRecord = await kcatFormat(brokers, dlq, "%h");
    expect(dlqRecord).toContain("_watermill_message_uuid=fails-1");
    expect(dlqRecord).toContain("reason_class_poisoned=handler_error");
    await kcatProduce(brokers, topic, 0, JSON.stringify({ fail: false }), { _watermill_message_uuid: "fails-1" });
    expect(await until(async () => (await k.redis.get(key))?.startsWith(`done:${topic}:0:1#`) === true, 20_000)).toBe(
      true,
    );
    expect(await k.redis.lrange(`${service}:effects`, 0, -1)).toEqual(["fails-1"]);
  });

  it("the library's worker (npm run worker) keeps every clause of the contract", async () => {
    const { names, id } = await k.topics("conf-worker", { "": 1, ".dlq": 1 });
    const [topic] = names as [string];
    const service = `conf-worker-${id}`;
    groups.push(...["on-review-created", "on-user-banned", "on-page-viewed"].map((h) => `${service}.${h}`));
    const port = await freePort();
    const env = {
      SERVICE_NAME: service,
      DEMO_TOPIC: topic,
      KAFKA_BROKERS: k.brokers.join(","),
      REDIS_URL,
      DATABASE_URL: "",
    };
    const worker = await startProcess(
      "node_modules/.bin/tsx",
      ["scripts/worker.ts", "--metrics-port", String(port)],
      env,
      /consuming .* handlers from/,
      `http://127.0.0.1:${port}/metrics`,
    );
    running.push(worker);
    const { code, out } = await conformance(
      {
        metrics: worker.metricsUrl,
        redis: REDIS_URL,
        brokers: k.brokers.join(","),
        topic,
        service,
        handler: "on-review-created",
      },
      ["--header", "Event-Type=review.created"],
    );
    expectAllHeld(out);
    expect(code, out).toBe(0);
    // The library remembers each DLQ copy it published (`dlq:<topic>:…`): this file's own, removed after it.
    for await (const keys of k.redis.scanStream({ match: `dlq:${topic}:*`, count: 1000 }))
      k.forget(...(keys as string[]));
  });

  it("a consumer that marks before its handler fails the clauses it breaks, by name, and exits non-zero", async () => {
    const { names, id } = await k.topics("conf-before", { "": 1, ".dlq": 1 });
    const [topic] = names as [string];
    const service = `conf-before-${id}`;
    const fixture = await startMarksBeforeConsumer({
      brokers: k.brokers,
      redisUrl: REDIS_URL,
      topic,
      service,
      handler: "on-event",
    });
    groups.push(fixture.group);
    try {
      const { code, out } = await conformance({
        metrics: fixture.metricsUrl,
        redis: REDIS_URL,
        brokers: k.brokers.join(","),
        topic,
        service,
        handler: "on-event",
        "phase-ms": "8000",
      });
      const v = verdicts(out);
      expect(code, out).toBe(1);
      // What spec §10 says it loses: the key is marked before the run, a failure keeps it, the message never runs again.
      for (const name of ["claim-before-handler", "release-on-failure", "failure-then-success", "done-with-position"])
        expect(v.get(name), `${name}\n${out}`).toBe("BROKEN");
      // What it does keep is not blamed on it.
      for (const name of [
        "duplicate-counted",
        "poison-to-dlq",
        "zero-series",
        "dedup-handler-info",
        "offsets-committed",
      ])
        expect(v.get(name), `${name}\n${out}`).toBe("held");
      expect(out).toMatch(/first write to a fresh key was "SET" ".*" "1"/);
    } finally {
      await fixture.stop();
    }
  });
});
