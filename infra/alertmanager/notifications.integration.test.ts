/**
 * A notification end to end, with the shipped rules, Alertmanager config and templates: a real
 * Prometheus scrapes a handler that lost its dedup keys (with hot UUIDs and open DLQ records) and
 * fires DedupMemoryLost; a real Alertmanager, on the shipped config (only its addresses and timings
 * changed), sends it to the app's receiver route — through a tiny HTTP server that hands each request
 * to the proxy and the route handler — and, rendered with templates/dedup.tmpl, to a Slack-style sink
 * that captures the text people would read. The notification becomes a chart event of the handler;
 * a resolved one too. A wrong token is refused 401 and records nothing.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { NextRequest } from "next/server";
import { Gauge, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { POST } from "@/app/api/alerts/notifications/route";
import { GET as eventsGET } from "@/app/api/events/route";
import { HOT_UUID_METRICS } from "@/names/dedup";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { proxy } from "@/proxy";
import { parseConfig } from "@/server/config";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { closeServer } from "@/server/testing/net";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const RULES = join(HERE, "../prometheus/rules/dedup.yml");
const TOKEN = "hd-receiver-token-0123456789";
const SERVICE = "hd-svc";
const HANDLER = "hd-on-a";
// Ports of this helper's range: the exporter, the receiver's front, the Slack-style sink.
const EXPORTER_PORT = 19_741;
const RECEIVER_PORT = 19_742;
const SINK_PORT = 19_743;

type G = typeof globalThis & { __dedupHealthConfig?: unknown };
const g = globalThis as G;
const savedConfig = g.__dedupHealthConfig;

const registry = new Registry();
const servers: Server[] = [];
let prom: OwnPrometheus | undefined;
let am: OwnAlertmanager | undefined;
let dir = "";
/** What the route answered to each webhook call, and what the sink received. */
const answered: Array<{
  status: number;
  body: string;
  sent: { alerts: Array<{ status: string; labels: Record<string, string> }> };
}> = [];
const rendered: Array<{ title: string; text: string }> = [];

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function listen(
  port: number,
  handle: (req: IncomingMessage, body: string) => Promise<{ status: number; body: string }>,
): Promise<void> {
  const s = createServer((req, res) => {
    void bodyOf(req).then(async (body) => {
      const r = await handle(req, body);
      res.writeHead(r.status, { "content-type": "application/json" }).end(r.body);
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, "127.0.0.1", r));
}

/** The request as Next would hand it on: the proxy first (its guards), then the route. */
async function throughApp(req: IncomingMessage, body: string): Promise<{ status: number; body: string }> {
  const headers = new Headers(
    Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v] as [string, string]] : [])),
  );
  const url = `http://${req.headers.host}${req.url}`;
  const p = proxy(new NextRequest(url, { method: req.method, headers, body }));
  if (p.headers.get("x-middleware-next") !== "1") return { status: p.status, body: await p.text() };
  const res = await POST(new Request(url, { method: req.method, headers, body }));
  const out = { status: res.status, body: await res.text() };
  answered.push({ ...out, sent: JSON.parse(body) });
  return out;
}

/** The shipped Alertmanager config with this test's addresses, a 1-s group timing and a Slack receiver on the shipped texts. */
function testConfig(): string {
  const cfg = parse(readFileSync(join(HERE, "alertmanager.yml"), "utf8")) as {
    templates: string[];
    route: Record<string, unknown>;
    receivers: Array<{
      name: string;
      webhook_configs: Array<Record<string, unknown> & { http_config: { authorization: Record<string, string> } }>;
      slack_configs?: unknown[];
    }>;
  };
  writeFileSync(join(dir, "receiver-token"), `${TOKEN}\n`);
  // The shipped relative template glob, resolved from this config's directory as from the shipped one's.
  expect(cfg.templates).toEqual(["templates/*.tmpl"]);
  symlinkSync(join(HERE, "templates"), join(dir, "templates"));
  Object.assign(cfg.route, { group_wait: "1s", group_interval: "1s" });
  const receiver = cfg.receivers[0]!;
  const hook = receiver.webhook_configs[0]!;
  hook.url = String(hook.url).replace("http://127.0.0.1:3000", `http://127.0.0.1:${RECEIVER_PORT}`);
  // The shipped relative credentials_file, read from this config's directory.
  expect(hook.http_config.authorization.credentials_file).toBe("receiver-token");
  receiver.slack_configs = [
    {
      api_url: `http://127.0.0.1:${SINK_PORT}/slack`,
      channel: "#hd",
      send_resolved: true,
      title: '{{ template "dedup.title" . }}',
      text: '{{ template "dedup.text" . }}',
    },
  ];
  return stringify(cfg);
}

async function until<T>(what: string, read: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms (webhook calls: ${JSON.stringify(answered)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function handlerEvents(): Promise<Array<{ kind: string; title: string; labels: Record<string, string> }>> {
  const res = await eventsGET(
    new Request(`http://localhost/api/events?range=1h&service=${SERVICE}&handler=${HANDLER}`, {
      headers: { host: "localhost" },
    }),
  );
  return ((await res.json()) as { events: Array<{ kind: string; title: string; labels: Record<string, string> }> })
    .events;
}

beforeAll(async () => {
  g.__dedupHealthConfig = parseConfig({ ALERT_RECEIVER_TOKEN: TOKEN });
  setObserveContext(createObserveContext({ metrics: new LocalSource(new Registry()), redis: null }));
  // The handler lost 60 % of its keys; two hot UUIDs; 4 open DLQ records.
  new Gauge({
    name: OBSERVE_METRIC_NAMES.memoryLost,
    help: "lost",
    labelNames: ["service", "handler"],
    registers: [registry],
  }).set({ service: SERVICE, handler: HANDLER }, 0.6);
  const hot = new Gauge({
    name: HOT_UUID_METRICS.copies,
    help: "hot",
    labelNames: ["service", "handler", "topic", "uuid"],
    registers: [registry],
  });
  hot.set({ service: SERVICE, handler: HANDLER, topic: "hd-topic", uuid: "hd-uuid-hottest" }, 40);
  hot.set({ service: SERVICE, handler: HANDLER, topic: "hd-topic", uuid: "hd-uuid-second" }, 9);
  new Gauge({
    name: OBSERVE_METRIC_NAMES.dlqBacklog,
    help: "dlq",
    labelNames: ["topic", "handler", "reason_poisoned"],
    registers: [registry],
  }).set({ topic: "hd-topic", handler: HANDLER, reason_poisoned: "marshal" }, 4);
  await listen(EXPORTER_PORT, async () => ({ status: 200, body: await registry.metrics() }));
  await listen(RECEIVER_PORT, throughApp);
  await listen(SINK_PORT, async (_req, body) => {
    const m = JSON.parse(body) as { attachments?: Array<{ title: string; text: string }> };
    for (const a of m.attachments ?? []) rendered.push({ title: a.title, text: a.text });
    return { status: 200, body: "ok" };
  });
  dir = mkdtempSync(join(tmpdir(), "hd-am-"));
  writeFileSync(join(dir, "alertmanager.yml"), testConfig());
  am = await startOwnAlertmanager({ configFile: join(dir, "alertmanager.yml") });
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${EXPORTER_PORT}`],
    ruleFiles: [RULES],
    alertmanagers: [am.url.replace("http://", "")],
  });
}, 30_000);

afterAll(async () => {
  await prom?.stop();
  await am?.stop();
  for (const s of servers) await closeServer(s);
  setObserveContext(null);
  g.__dedupHealthConfig = savedConfig;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a notification of DedupMemoryLost, from Prometheus through Alertmanager", () => {
  it("reaches people with the links and the handler's hot UUIDs, and the app records it on the handler's chart, then its resolution", async () => {
    const text = await until("rendered text", () => rendered.find((r) => r.title.startsWith("[FIRING")));
    expect(text.title).toBe(`[FIRING:1] DedupMemoryLost ${SERVICE}/${HANDLER}`);
    expect(text.text).toContain(`FIRING (page): Dedup memory lost on ${SERVICE}/${HANDLER}: 60% of its keys gone`);
    expect(text.text).toContain(`Dashboard: http://127.0.0.1:3000/handlers/${SERVICE}/${HANDLER}?range=1h`);
    expect(text.text).toContain("Runbook: http://127.0.0.1:3000/runbook#dedupmemorylost");
    expect(text.text).toContain("Top hot UUIDs: hd-uuid-hottest (40 copies), hd-uuid-second (9 copies)");
    expect(text.text).toContain("DLQ backlog: 4 open DLQ records");

    const firing = await until("webhook call", () =>
      answered.find((a) => a.sent.alerts.some((x) => x.status === "firing")),
    );
    expect([firing.status, JSON.parse(firing.body)]).toEqual([200, { recorded: 1 }]);
    const notified = (await handlerEvents()).filter((e) => e.kind === "notified");
    expect(notified.map((e) => e.title)).toEqual([
      `Notified: DedupMemoryLost firing (${SERVICE}/${HANDLER}) — Dedup memory lost on ${SERVICE}/${HANDLER}: 60% of its keys gone`,
    ]);
    expect(notified[0]?.labels).toMatchObject({
      alertname: "DedupMemoryLost",
      service: SERVICE,
      handler: HANDLER,
      severity: "page",
      status: "firing",
    });

    // Resolved: Prometheus stopped (no re-send), the alert ended now, as Prometheus sends a resolution.
    await prom?.stop();
    prom = undefined;
    const labels = firing.sent.alerts[0]!.labels;
    const res = await fetch(`${am!.url}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ labels, endsAt: new Date().toISOString() }]),
    });
    expect(res.status).toBe(200);
    await until("resolved webhook call", () =>
      answered.find((a) => a.sent.alerts.some((x) => x.status === "resolved")),
    );
    const after = (await handlerEvents()).filter((e) => e.kind === "notified");
    expect(after.map((e) => e.labels.status)).toEqual(["firing", "resolved"]);
    expect(after[1]?.title).toMatch(new RegExp(`^Notified: DedupMemoryLost resolved \\(${SERVICE}/${HANDLER}\\)`));
    const resolvedText = await until("rendered resolution", () =>
      rendered.find((r) => r.title.startsWith("[RESOLVED")),
    );
    expect(resolvedText.text).toMatch(/^RESOLVED \(page\): /);
  }, 30_000);

  it("refuses a call without the receiver's token (401 with the reason) or with another body (400), and records nothing", async () => {
    const before = (await handlerEvents()).length;
    const post = (auth: string | null, body: unknown) =>
      POST(
        new Request("http://127.0.0.1/api/alerts/notifications", {
          method: "POST",
          headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
          body: JSON.stringify(body),
        }),
      );
    const alert = {
      status: "firing",
      labels: { alertname: "DedupMemoryLost", service: SERVICE, handler: HANDLER },
      annotations: {},
      startsAt: new Date().toISOString(),
      endsAt: "0001-01-01T00:00:00Z",
    };
    const valid = { version: "4", status: "firing", receiver: "dedup-health", alerts: [alert] };
    for (const auth of [null, "Bearer wrong-token-0123456789", `Basic ${TOKEN}`]) {
      const r = await post(auth, valid);
      expect(r.status, String(auth)).toBe(401);
      expect(await r.json()).toMatchObject({ error: "unauthorized", detail: expect.stringMatching(/bearer|Bearer/) });
    }
    const bad = await post(`Bearer ${TOKEN}`, { ...valid, version: "3" });
    expect(bad.status).toBe(400);
    expect((await bad.json()) as { detail: string }).toMatchObject({
      error: "bad_request",
      detail: expect.stringContaining("version"),
    });
    expect((await handlerEvents()).length).toBe(before);
  });
});
