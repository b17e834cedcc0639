import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { consumerInfoGauge } from "@/server/transport/replica-id";
import { CONSUMER_INFO_METRIC } from "@/names/observe";
import type { GroupMembers } from "../kafka/consumer-group";
import type { DeclaredHandler } from "../core/handler-registry";
import { LocalSource } from "../metrics/local";
import { PROMQL } from "@/lib/named-queries";
import type { Sample } from "../metrics/source";
import { buildScrapeCoverage, compareScrapeWithGroups } from "./scrape-coverage";

const info = (service: string, replica: string, instance: string): Sample => ({
  labels: { service, replica, instance },
  value: 1,
});
const group = (groupId: string, members: Array<[string, number]>): GroupMembers => ({
  groupId,
  state: "Stable",
  members: members.map(([replica, partitions]) => ({
    clientId: `${groupId}/${replica}`,
    host: "10.0.0.1",
    partitions,
  })),
});
// The demo's three groups, each member holding its share of 6 partitions.
const groups = (members: Array<[string, number]>) =>
  ["notification.on-review-created", "notification.on-user-banned", "notification.on-page-viewed"].map((g) =>
    group(g, members),
  );

describe("compareScrapeWithGroups", () => {
  it("one of two replicas scraped: a mismatch naming the unscraped member, about half of the traffic", () => {
    const c = compareScrapeWithGroups(
      "notification",
      [info("notification", "host-a-101", "host-a:3000")],
      groups([
        ["host-a-101", 3],
        ["host-b-202", 3],
      ]),
    );
    expect(c).toMatchObject({
      instances: 1,
      scrapedReplicas: ["host-a-101"],
      memberReplicas: ["host-a-101", "host-b-202"],
      unscraped: ["host-b-202"],
      notInGroups: [],
      scrapedShare: 0.5,
      mismatch: true,
    });
    expect(c.message).toBe(
      "Prometheus scrapes 1 instance of notification, the consumer groups have 2 members: host-b-202 is not scraped, so the figures show about half of the traffic.",
    );
  });

  it("every member scraped (two in one process, one elsewhere): no banner", () => {
    const scraped = [
      info("notification", "host-a-101", "host-a:3000"),
      info("notification", "host-a-101-r1", "host-a:3000"),
      info("notification", "host-b-202", "host-b:3000"),
    ];
    const c = compareScrapeWithGroups(
      "notification",
      scraped,
      groups([
        ["host-a-101", 2],
        ["host-a-101-r1", 2],
        ["host-b-202", 2],
      ]),
    );
    expect(c).toMatchObject({
      instances: 2,
      unscraped: [],
      notInGroups: [],
      scrapedShare: 1,
      mismatch: false,
      message: null,
    });
  });

  it("the share follows the partitions held, not the member count; other services' samples are ignored", () => {
    const scraped = [info("notification", "a-1", "a:3000"), info("billing", "b-9", "b:3000")];
    const c = compareScrapeWithGroups(
      "notification",
      scraped,
      groups([
        ["a-1", 1],
        ["c-3", 5],
      ]),
    );
    expect(c.scrapedReplicas).toEqual(["a-1"]);
    expect(c.scrapedShare).toBeCloseTo(1 / 6, 9);
    expect(c.message).toContain("about 17 % of the traffic");
  });

  it("a scraped replica in no group (stopped, still in Prometheus's staleness window) is a mismatch with its own sentence", () => {
    const c = compareScrapeWithGroups(
      "notification",
      [info("notification", "a-1", "a:3000"), info("notification", "gone-7", "g:3000")],
      groups([["a-1", 2]]),
    );
    expect(c).toMatchObject({ unscraped: [], notInGroups: ["gone-7"], mismatch: true });
    expect(c.message).toMatch(/gone-7.*stopped within Prometheus's staleness window/);
  });

  it("nothing scraped and no member: no mismatch; a gauge at 0 does not count as scraped", () => {
    expect(compareScrapeWithGroups("notification", [], []).mismatch).toBe(false);
    const c = compareScrapeWithGroups(
      "notification",
      [{ labels: { service: "notification", replica: "a-1", instance: "a" }, value: 0 }],
      groups([["a-1", 2]]),
    );
    expect(c.unscraped).toEqual(["a-1"]);
    expect(c.message).toContain("Prometheus scrapes 0 instances");
  });
});

describe("buildScrapeCoverage", () => {
  const declared = [
    { service: "notification", topic: "demo.events", setup: { handler: "on-review-created" } },
    { service: "notification", topic: "demo.events", setup: { handler: "on-user-banned" } },
    { service: "workshop", topic: "workshop.x.1", setup: { handler: "x" } },
  ] as unknown as DeclaredHandler[];

  it("asks Kafka for the declared groups (never a workshop one) and compares them with the one fixed query", async () => {
    const asked: string[][] = [];
    const queries: string[] = [];
    const metrics = { instant: async (q: string) => (queries.push(q), [info("notification", "a-1", "a:3000")]) };
    const field = await buildScrapeCoverage(metrics as never, declared, async (gs) => {
      asked.push(gs.map((g) => `${g.groupId}@${g.topic}`));
      return gs.map((g) =>
        group(g.groupId, [
          ["a-1", 3],
          ["b-2", 3],
        ]),
      );
    });
    expect(asked).toEqual([["notification.on-review-created@demo.events", "notification.on-user-banned@demo.events"]]);
    expect(queries).toEqual(["consumer_instances"]);
    expect(field).toMatchObject({
      status: "ok",
      services: [{ service: "notification", unscraped: ["b-2"], scrapedShare: 0.5, mismatch: true }],
    });
  });

  it("null without Kafka (embedded); unavailable when Kafka or Prometheus fails", async () => {
    const metrics = { instant: async () => [] };
    expect(await buildScrapeCoverage(metrics as never, declared, async () => null)).toBeNull();
    expect(
      await buildScrapeCoverage(metrics as never, declared, async () =>
        Promise.reject(new Error("kafka: describeGroups failed")),
      ),
    ).toMatchObject({ status: "unavailable", detail: expect.stringContaining("describeGroups") });
    const down = { instant: async () => Promise.reject(new Error("prometheus: ECONNREFUSED")) };
    expect(await buildScrapeCoverage(down as never, declared, async () => [])).toMatchObject({
      status: "unavailable",
      detail: expect.stringContaining("ECONNREFUSED"),
    });
  });

  it("embedded metrics answer consumer_instances from the registry's gauge, as the one instance 'local'", async () => {
    const registry = new Registry();
    consumerInfoGauge(registry).set({ service: "notification", replica: "h-1" }, 1);
    const src = new LocalSource(registry, { intervalMs: 1000 });
    await src.sample();
    expect(await src.instant("consumer_instances")).toEqual([
      { labels: { service: "notification", replica: "h-1", instance: "local" }, value: 1 },
    ]);
    expect(PROMQL.consumer_instances).toBe(`max by (service, replica, instance) (${CONSUMER_INFO_METRIC})`);
  });
});
