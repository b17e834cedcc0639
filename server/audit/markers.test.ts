/**
 * The audit trail as chart markers: each action that changed something is one marker of its kind
 * at its time, with a hover text saying what changed and who did it, on the pages of the service
 * and handler it concerns (an entry without a scope on every page); dry runs change nothing and
 * are not drawn; the newest MAX_MARKERS are kept. getEvents merges them with the other sources and
 * says when the trail could not be read.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_MARKERS } from "@/lib/api/events";
import type { ObserveContext } from "@/server/observe/context";
import { getEvents } from "@/server/observe/routes/events";
import { setAuditStore } from "./index";
import { auditMarkers } from "./markers";
import { MemoryAuditStore, type AuditInput } from "./store";

const base = { who: "local", dryRun: false, matched: null, changed: null, result: "ok" } as const;
const t0 = Date.parse("2026-12-02T10:00:00Z");
const at = (s: number) => new Date(t0 + s * 1000);

async function storeWith(entries: AuditInput[]): Promise<void> {
  const store = new MemoryAuditStore();
  for (const e of entries) await store.append(e);
  await setAuditStore(store);
}

afterEach(() => setAuditStore(null));

describe("auditMarkers", () => {
  it("draws each change on its service's and handler's pages with what changed and who, and leaves dry runs out", async () => {
    await storeWith([
      { ...base, at: at(1), action: "demo.faults", filter: { latencyMs: 5 }, scope: { service: "s1" } },
      {
        ...base,
        at: at(2),
        action: "keys.forget",
        filter: { service: "s1", handler: "h1", uuids: ["a"] },
        dryRun: true,
        matched: 50,
        changed: 0,
        scope: { service: "s1", handler: "h1" },
      },
      {
        ...base,
        at: at(3),
        action: "keys.forget",
        filter: { service: "s1", handler: "h1", uuids: ["a"] },
        matched: 50,
        changed: 50,
        scope: { service: "s1", handler: "h1" },
      },
      {
        ...base,
        at: at(4),
        action: "keys.ttl",
        filter: { service: "s1", handler: "h2", ttlMs: 60000 },
        matched: 3,
        changed: 3,
        scope: { service: "s1", handler: "h2" },
      },
      {
        ...base,
        at: at(5),
        action: "dlq.redrive",
        filter: { filter: { handler: "h1" } },
        who: "token",
        matched: 2,
        changed: 2,
        scope: { service: "s1", handler: "h1" },
      },
      {
        ...base,
        at: at(6),
        action: "dlq.replay",
        filter: { topic: "t.dlq", max: 10 },
        who: "cli (sre)",
        matched: 3,
        changed: 2,
        scope: { service: "s1" },
      },
      { ...base, at: at(7), action: "workshop.run", filter: { name: "retry-on-error" }, scope: { service: "s2" } },
      {
        ...base,
        at: at(8),
        action: "silence.create",
        filter: { alertname: "DedupRedisErrors", comment: "deploying fix" },
        scope: { service: "s1" },
      },
      {
        ...base,
        at: at(9),
        action: "dlq.redrive",
        filter: { uuids: ["x"] },
        result: "error: kafka: down",
        scope: { service: "s1", handler: "h1" },
      },
      { ...base, at: at(10), action: "some.new.action", filter: {} },
    ]);
    const marks = await auditMarkers({ from: at(0), to: at(60), service: "s1", handler: "h1" });
    expect(marks.map((m) => [m.at, m.kind, m.title])).toEqual([
      [at(10).toISOString(), "action", "some.new.action (by local)"],
      [at(9).toISOString(), "replay", "DLQ re-drive on h1 — failed: kafka: down (by local)"],
      [at(8).toISOString(), "silence", "Silence created for DedupRedisErrors: deploying fix (by local)"],
      [
        at(6).toISOString(),
        "replay",
        "DLQ replay (npm run dlq:replay) of t.dlq: 2 replayed of 3 matched (by cli (sre))",
      ],
      [at(5).toISOString(), "replay", "DLQ re-drive on h1: 2 re-driven of 2 matched (by token)"],
      [at(3).toISOString(), "keys", "Keys forgotten on h1: 50 deleted of 50 matched (by local)"],
      [at(1).toISOString(), "fault", "Demo store fault set: latencyMs=5 (by local)"],
    ]);
    expect(marks[5]!.labels).toEqual({ service: "s1", handler: "h1", action: "keys.forget" });
    // The other handler's page has its TTL change, not h1's forget; another service's page neither.
    expect(
      (await auditMarkers({ from: at(0), to: at(60), service: "s1", handler: "h2" })).map((m) => m.title),
    ).toContain("Key TTL set to 60000 ms on h2: 3 changed of 3 matched (by local)");
    expect((await auditMarkers({ from: at(0), to: at(60), service: "s2" })).map((m) => m.kind)).toEqual([
      "action",
      "workshop",
    ]);
    // Only the range asked for.
    expect((await auditMarkers({ from: at(2), to: at(4), service: "s1" })).map((m) => m.kind)).toEqual([
      "keys",
      "keys",
    ]);
  });

  it("names the user who did it; a refusal is not drawn (nothing changed); an entry left 'started' says it was not completed", async () => {
    await storeWith([
      {
        ...base,
        at: at(1),
        who: "alice",
        action: "keys.forget",
        filter: {},
        matched: 1,
        changed: 1,
        scope: { service: "s1" },
      },
      {
        ...base,
        at: at(2),
        who: "bob",
        action: "keys.forget",
        filter: {},
        result: "refused: bob is viewer: *; keys.forget on s1 needs operator",
        scope: { service: "s1" },
      },
      {
        ...base,
        at: at(3),
        who: "alice",
        action: "dlq.redrive",
        filter: {},
        result: "started",
        scope: { service: "s1" },
      },
    ]);
    expect((await auditMarkers({ from: at(0), to: at(60), service: "s1" })).map((m) => m.title)).toEqual([
      "DLQ re-drive — started, not completed (in progress, or cut short) (by alice)",
      "Keys forgotten: 1 deleted of 1 matched (by alice)",
    ]);
  });

  it("keeps the newest MAX_MARKERS", async () => {
    await storeWith(
      Array.from({ length: MAX_MARKERS + 7 }, (_, i) => ({
        ...base,
        at: at(i),
        action: "demo.sources",
        filter: { n: i },
        scope: { service: "s1" },
      })),
    );
    const marks = await auditMarkers({ from: at(0), to: at(3600), service: "s1" });
    expect(marks).toHaveLength(MAX_MARKERS);
    expect(marks[0]!.title).toBe(`Demo source changed: n=${MAX_MARKERS + 6} (by local)`);
  });
});

describe("getEvents with the audit trail", () => {
  const ctx = { metrics: { kind: "prometheus", range: async () => [] } } as unknown as ObserveContext;

  it("draws the recorded actions of the range on the page, and names the trail when it cannot be read", async () => {
    const now = Date.now();
    await storeWith([
      {
        ...base,
        at: new Date(now - 60_000),
        action: "dlq.redrive",
        filter: {},
        matched: 1,
        changed: 1,
        scope: { service: "s1", handler: "h1" },
      },
    ]);
    const r = await getEvents(ctx, { range: "5m", service: "s1", handler: "h1" }, now, auditMarkers);
    expect(r.events.filter((e) => e.kind === "replay").map((e) => e.title)).toEqual([
      "DLQ re-drive on h1: 1 re-driven of 1 matched (by local)",
    ]);
    expect(r.partial).toEqual([]);
    const failing = await getEvents(ctx, { range: "5m", service: "s1" }, now, () =>
      Promise.reject(new Error("audit store unavailable: db down")),
    );
    expect(failing.partial).toEqual(["recorded actions: audit store unavailable: db down"]);
  });
});
