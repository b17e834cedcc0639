/**
 * `POST /api/silences` against a real Alertmanager 0.25 (own process, free port), checked with
 * amtool: a silence made from one alert instance keeps the instance's identifying labels as
 * matchers, so it mutes that instance and not another instance of the same alert on the same
 * service; its audit entry keeps the silence's id.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silenceAnswerSchema } from "@/lib/api/silences";
import { auditStore, setAuditStore } from "@/server/audit";
import { LOCAL_REQUEST_HEADERS, configOfFile, useConfig } from "@/server/testing/app-config";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";
import { POST } from "./route";

configOfFile();
let am: OwnAlertmanager;
const service = `silence-test-${randomBytes(4).toString("hex")}`;

/** Sends alerts to Alertmanager as Prometheus does (POST /api/v2/alerts, ending in 5 min). */
async function send(...alerts: Array<Record<string, string>>): Promise<void> {
  const endsAt = new Date(Date.now() + 5 * 60_000).toISOString();
  const res = await fetch(`${am.url}/api/v2/alerts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(
      alerts.map((labels) => ({ labels: { severity: "page", ...labels }, startsAt: new Date().toISOString(), endsAt })),
    ),
  });
  expect(res.status).toBe(200);
}

/** `amtool alert query --active --silenced` of the service's DedupRedisErrors: each instance's reason → its state. */
function amtoolStates(): Record<string, string> {
  const out = execFileSync(
    "amtool",
    [
      "alert",
      "query",
      "--active",
      "--silenced",
      "-o",
      "json",
      `--alertmanager.url=${am.url}`,
      "alertname=DedupRedisErrors",
      `service=${service}`,
    ],
    { encoding: "utf8" },
  );
  const list = JSON.parse(out) as Array<{ labels: Record<string, string>; status: { state: string } }>;
  return Object.fromEntries(list.map((a) => [a.labels.reason ?? "", a.status.state]));
}

beforeAll(async () => {
  am = await startOwnAlertmanager();
  useConfig({ ALERTMANAGER_URL: am.url });
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  await setAuditStore(null);
}, 30_000);

afterAll(async () => {
  await am?.stop();
  await setAuditStore(null);
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("silences made from an alert instance", () => {
  it("a silence of DedupRedisErrors{reason=redis_timeout} leaves the reason=marshal instance active (amtool); its audit entry keeps the silence id", async () => {
    await send(
      { alertname: "DedupRedisErrors", service, reason: "redis_timeout" },
      { alertname: "DedupRedisErrors", service, reason: "marshal" },
    );
    // The instance's labels as the alerts page has them (Prometheus' rule labels, severity included).
    const body = {
      alertname: "DedupRedisErrors",
      service,
      labels: { service, reason: "redis_timeout", severity: "page", instance: "10.0.0.7:3000" },
      durationMinutes: 30,
      comment: "Redis failover in progress",
    };
    const res = await POST(
      new Request("http://localhost/api/silences", {
        method: "POST",
        headers: { ...LOCAL_REQUEST_HEADERS, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
    const json = await res.json();
    expect(res.status, JSON.stringify(json)).toBe(201);
    const { silence } = silenceAnswerSchema.parse(json);
    expect(silence.matchers.map((m) => `${m.name}=${m.value}`).sort()).toEqual([
      "alertname=DedupRedisErrors",
      "reason=redis_timeout",
      `service=${service}`,
    ]);

    let states = amtoolStates();
    for (let i = 0; i < 20 && states.redis_timeout !== "suppressed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      states = amtoolStates();
    }
    expect(states).toEqual({ redis_timeout: "suppressed", marshal: "active" });

    const [entry] = await auditStore().list({ action: "silence.create", limit: 10, service });
    expect(entry).toMatchObject({
      action: "silence.create",
      dryRun: false,
      result: "ok",
      scope: { service },
      touched: { silenceId: { items: [silence.id], total: 1 } },
    });
  });

  it("refuses labels that contradict the alert name, service or handler (400)", async () => {
    const body = {
      alertname: "DedupRedisErrors",
      service,
      labels: { service: "another" },
      durationMinutes: 30,
      comment: "x",
    };
    const res = await POST(
      new Request("http://localhost/api/silences", {
        method: "POST",
        headers: { ...LOCAL_REQUEST_HEADERS, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: expect.any(String),
      detail: expect.stringMatching(/labels\.service/),
    });
  });
});
