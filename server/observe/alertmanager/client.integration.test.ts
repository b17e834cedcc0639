/**
 * The Alertmanager client against a real Alertmanager 0.25 (own process, free port): an alert it
 * receives is listed active; a silence created through the client suppresses it and names itself
 * with its end; `amtool silence query` lists exactly what the client lists; expiring it makes the
 * alert active again. Also: an inhibited alert names the alert that inhibits it.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertInstance } from "@/lib/api/alerts";
import { useConfig } from "@/server/testing/app-config";
import { AlertmanagerClient, firingSinceOf, instanceView, withAlertmanager } from "./client";
import { createSilence, getSilences, SILENCES_PER_SERVICE_MAX } from "../routes/silences";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";

let am: OwnAlertmanager;
let client: AlertmanagerClient;
const service = `am-test-${randomBytes(4).toString("hex")}`;

const instance = (alert: string, labels: Record<string, string>): AlertInstance => ({
  alert,
  state: "firing",
  labels,
  activeAt: null,
  firingSince: null,
  firesAt: null,
  value: 1,
  severity: "ticket",
  summary: "",
});

/** Sends alerts to Alertmanager as Prometheus does (POST /api/v2/alerts, ending in 5 min). */
async function send(...alerts: Array<Record<string, string>>): Promise<void> {
  const endsAt = new Date(Date.now() + 5 * 60_000).toISOString();
  const res = await fetch(`${am.url}/api/v2/alerts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(
      alerts.map((labels) => ({
        labels: { severity: "ticket", ...labels },
        startsAt: new Date().toISOString(),
        endsAt,
      })),
    ),
  });
  expect(res.status).toBe(200);
}

/** `amtool silence query -o json` (the silences not expired) against our Alertmanager, as ids with their end and matchers. */
function amtoolSilences(): Array<{ id: string; endsAt: string; matchers: string }> {
  const out = execFileSync("amtool", ["silence", "query", "-o", "json", `--alertmanager.url=${am.url}`], {
    encoding: "utf8",
  });
  const list = JSON.parse(out) as Array<{
    id: string;
    endsAt: string;
    matchers: Array<{ name: string; value: string }>;
  }>;
  return list
    .map((s) => ({
      id: s.id,
      endsAt: new Date(s.endsAt).toISOString(),
      matchers: s.matchers
        .map((m) => `${m.name}=${m.value}`)
        .sort()
        .join(","),
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

beforeAll(async () => {
  // The repo's config: its inhibition (Redis errors on a service inhibit its latency alert) is tested below.
  am = await startOwnAlertmanager({ configFile: join(__dirname, "../../../infra/alertmanager/alertmanager.yml") });
  client = new AlertmanagerClient(am.url);
}, 30_000);

afterAll(async () => {
  await am?.stop();
});

describe("Alertmanager client (API v2) against Alertmanager 0.25", () => {
  const errors = instance("DedupRedisErrors", { service, reason: "marshal" });

  it("received → active; silenced → suppressed by that silence until its end; amtool lists the same; expired → active", async () => {
    await send({ alertname: "DedupRedisErrors", service, reason: "marshal" });
    const v0 = instanceView(errors, await client.alerts(), await client.silences());
    expect(v0).toEqual({ state: "active", suppressedBy: [], until: null });

    const id = await client.createSilence({
      alertname: "DedupRedisErrors",
      service,
      durationMinutes: 30,
      comment: "replay of the DLQ",
    });
    const silence = await client.silence(id);
    expect(silence.state).toBe("active");
    // Alertmanager moves a start already past to its own now: the length is 30 min within the call's time.
    expect(Math.abs(Date.parse(silence.endsAt) - Date.parse(silence.startsAt) - 30 * 60_000)).toBeLessThan(1000);
    const v1 = instanceView(errors, await client.alerts(), await client.silences());
    expect(v1.state).toBe("suppressed");
    expect(v1.suppressedBy).toEqual([{ kind: "silence", id, text: "replay of the DLQ", until: silence.endsAt }]);
    expect(v1.until).toBe(silence.endsAt);

    const mine = (await client.silences())
      .filter((s) => s.state !== "expired")
      .map((s) => ({
        id: s.id,
        endsAt: new Date(s.endsAt).toISOString(),
        matchers: s.matchers
          .map((m) => `${m.name}=${m.value}`)
          .sort()
          .join(","),
      }));
    expect(amtoolSilences()).toEqual(mine.sort((a, b) => a.id.localeCompare(b.id)));
    expect(mine.find((s) => s.id === id)?.matchers).toBe(`alertname=DedupRedisErrors,service=${service}`);

    await client.expireSilence(id);
    expect((await client.silence(id)).state).toBe("expired");
    const v2 = instanceView(errors, await client.alerts(), await client.silences());
    expect(v2.state).toBe("active");
    expect(v2.suppressedBy).toEqual([]);
  });

  it("an instance Alertmanager has not received is not-received, with the active silences that will mute it", async () => {
    const pending = {
      ...instance("DedupDuplicateRateHigh", { service, topic: "t", handler: "h1" }),
      state: "pending" as const,
    };
    const id = await client.createSilence({
      alertname: "DedupDuplicateRateHigh",
      service,
      handler: "h1",
      durationMinutes: 5,
      comment: "replay",
    });
    const v = instanceView(pending, await client.alerts(), await client.silences());
    expect(v.state).toBe("not-received");
    expect(v.suppressedBy.map((s) => s.id)).toEqual([id]);
    const other = instanceView(
      { ...pending, labels: { service, topic: "t", handler: "h2" } },
      await client.alerts(),
      await client.silences(),
    );
    expect(other.suppressedBy).toEqual([]);
    await client.expireSilence(id);
  });

  it("a Redis error inhibits the latency alert of the same service, named by its labels", async () => {
    await send(
      { alertname: "DedupRedisErrors", service, reason: "redis_conn" },
      { alertname: "DedupRedisLatencyHigh", service },
    );
    let v = instanceView(
      instance("DedupRedisLatencyHigh", { service }),
      await client.alerts(),
      await client.silences(),
    );
    // Inhibition is computed as the alerts are listed: give Alertmanager a moment to hold both.
    for (let i = 0; i < 20 && v.state !== "suppressed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      v = instanceView(instance("DedupRedisLatencyHigh", { service }), await client.alerts(), await client.silences());
    }
    expect(v.state).toBe("suppressed");
    expect(v.suppressedBy).toEqual([
      expect.objectContaining({
        kind: "inhibition",
        text: `DedupRedisErrors{reason="redis_conn", service="${service}"}`,
        until: null,
      }),
    ]);
  });

  it("an unknown silence id is a NotFoundError (404), an unreachable Alertmanager an UpstreamUnavailableError (503)", async () => {
    await expect(client.silence("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({ status: 404 });
    await expect(new AlertmanagerClient("http://127.0.0.1:1", { timeoutMs: 500 }).alerts()).rejects.toMatchObject({
      status: 503,
    });
  });
});

describe("silences are bounded: a cap per service, and lists of what is in force", () => {
  const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
  let saved: unknown;
  beforeAll(() => {
    saved = g.__dedupHealthConfig;
    useConfig({ ALERTMANAGER_URL: am.url });
  });
  afterAll(() => {
    g.__dedupHealthConfig = saved;
  });

  it(`the ${SILENCES_PER_SERVICE_MAX + 1}th silence of one service is a 409 that says why; expired silences are not listed by /api/alerts or /api/silences`, async () => {
    const svc = `am-cap-${randomBytes(3).toString("hex")}`;
    const ids: string[] = [];
    for (let i = 0; i < SILENCES_PER_SERVICE_MAX; i++)
      ids.push(
        (
          await createSilence({
            alertname: "DedupRedisErrors",
            service: svc,
            handler: `h${i}`,
            durationMinutes: 5,
            comment: "cap",
          })
        ).silence.id,
      );
    await expect(
      createSilence({
        alertname: "DedupRedisErrors",
        service: svc,
        handler: "one-more",
        durationMinutes: 5,
        comment: "cap",
      }),
    ).rejects.toMatchObject({
      status: 409,
      code: "conflict",
      message: expect.stringMatching(new RegExp(`${svc} already has ${SILENCES_PER_SERVICE_MAX} silences`)),
    });
    // Another service is not held back by this one's.
    const other = (
      await createSilence({ alertname: "DedupRedisErrors", service: `${svc}-b`, durationMinutes: 5, comment: "cap" })
    ).silence.id;
    for (const id of [...ids, other]) await client.expireSilence(id);
    const expiredIds = new Set([...ids, other]);
    const listed = await getSilences();
    expect(listed.alertmanager.status).toBe("ok");
    if (listed.alertmanager.status === "ok")
      expect(listed.alertmanager.silences.filter((x) => expiredIds.has(x.id))).toEqual([]);
    const all = await getSilences(true);
    if (all.alertmanager.status === "ok")
      expect(all.alertmanager.silences.filter((x) => expiredIds.has(x.id))).toHaveLength(expiredIds.size);
    const { part } = await withAlertmanager([]);
    expect(part.status === "ok" && part.silences.some((x) => expiredIds.has(x.id))).toBe(false);
    // Expired, they no longer count: the service may be silenced again.
    await client.expireSilence(
      (await createSilence({ alertname: "DedupRedisErrors", service: svc, durationMinutes: 5, comment: "again" }))
        .silence.id,
    );
  }, 60_000);
});

describe("firing since: Alertmanager's start outlives a Prometheus restart", () => {
  it("an alert Alertmanager holds since 11 min reads 'firing since' 11 min, not the 25 s of a restarted Prometheus; an earlier Prometheus time is kept", async () => {
    const svc = `am-since-${randomBytes(3).toString("hex")}`;
    const startsAt = new Date(Date.now() - 11 * 60_000).toISOString();
    const res = await fetch(`${am.url}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        {
          labels: { alertname: "DedupMemoryLost", severity: "page", service: svc, handler: "h" },
          startsAt,
          endsAt: new Date(Date.now() + 5 * 60_000).toISOString(),
        },
      ]),
    });
    expect(res.status).toBe(200);
    const inst = {
      ...instance("DedupMemoryLost", { service: svc, handler: "h" }),
      severity: "page" as const,
      firingSince: new Date(Date.now() - 25_000).toISOString(),
    };
    const alerts = await client.alerts();
    expect(firingSinceOf(inst, alerts)).toBe(startsAt);
    const older = new Date(Date.now() - 60 * 60_000).toISOString();
    expect(firingSinceOf({ ...inst, firingSince: older }, alerts)).toBe(older);
    expect(firingSinceOf({ ...inst, state: "pending" }, alerts)).toBe(inst.firingSince);
    expect(firingSinceOf({ ...inst, labels: { service: `${svc}-other`, handler: "h" } }, alerts)).toBe(
      inst.firingSince,
    );
  });
});
