import { describe, expect, it } from "vitest";
import { MAX_MARKERS } from "@/lib/api/events";
import type { ObserveContext } from "../context";
import { alertTransitions, getEvents, restarts } from "./events";
import { recordEvent } from "../shared/events";
import type { RangeSeries } from "../metrics/source";

const pts = (from: number, to: number, step = 5): Array<[number, number]> => {
  const out: Array<[number, number]> = [];
  for (let t = from; t <= to; t += step) out.push([t, 1]);
  return out;
};
const inst = { alertname: "DedupRedisErrors", severity: "ticket", service: "s1", reason: "marshal" };

describe("alertTransitions", () => {
  it("marks pending, firing and resolved at the first evaluation that shows each", () => {
    const series: RangeSeries[] = [
      { labels: { ...inst, alertstate: "pending" }, points: pts(100, 110) },
      { labels: { ...inst, alertstate: "firing" }, points: pts(115, 130) },
    ];
    const ev = alertTransitions(series, 90, 150, 5);
    expect(ev.map((e) => [Date.parse(e.at) / 1000, e.labels.transition])).toEqual([
      [100, "pending"],
      [115, "firing"],
      [135, "resolved"],
    ]);
    expect(ev[1]!.title).toBe('DedupRedisErrors{service="s1", reason="marshal"} firing');
  });

  it("a rule flapping in and out of pending around bursts is one marker with the count, not a band of 60", () => {
    const lag = { alertname: "DedupConsumerLagGrowing", severity: "ticket", service: "s1", handler: "h", topic: "t" };
    // 30 cycles: pending for 10 s, inactive for 20 s.
    const points = Array.from({ length: 30 }, (_, i) => pts(1000 + i * 30, 1005 + i * 30)).flat();
    const ev = alertTransitions([{ labels: { ...lag, alertstate: "pending" }, points }], 990, 2000, 5);
    expect(ev).toHaveLength(1);
    expect(ev[0]!.labels).toMatchObject({ transition: "flapping", flaps: "30" });
    expect(ev[0]!.title).toMatch(
      /^DedupConsumerLagGrowing\{service="s1", handler="h", topic="t"\} pending and resolved 30 times \(flapping\) until \d\d:\d\d:\d\d UTC$/,
    );
    expect(Date.parse(ev[0]!.at) / 1000).toBe(1000);
    // Two cycles, or cycles far apart, stay as they are.
    const two = alertTransitions(
      [{ labels: { ...lag, alertstate: "pending" }, points: [...pts(1000, 1005), ...pts(1030, 1035)] }],
      990,
      2000,
      5,
    );
    expect(two.map((e) => e.labels.transition)).toEqual(["pending", "resolved", "pending", "resolved"]);
    const apart = alertTransitions(
      [
        {
          labels: { ...lag, alertstate: "pending" },
          points: [0, 1, 2].flatMap((i) => pts(1000 + i * 600, 1005 + i * 600)),
        },
      ],
      990,
      3000,
      5,
    );
    expect(apart).toHaveLength(6);
  });

  it("a state already held when the range starts is not a transition", () => {
    const ev = alertTransitions([{ labels: { ...inst, alertstate: "firing" }, points: pts(90, 150) }], 90, 150, 5);
    expect(ev).toEqual([]);
  });
});

describe("restarts", () => {
  it("one marker per distinct process start inside the range", () => {
    const s: RangeSeries[] = [
      {
        labels: { instance: "a:3000" },
        points: [
          [100, 50],
          [105, 50],
          [110, 107.5],
          [115, 107.5],
        ],
      },
    ];
    expect(restarts(s, 60_000, 200_000).map((e) => [e.at, e.title])).toEqual([
      [new Date(107_500).toISOString(), "App started (a:3000)"],
    ]);
  });
});

describe("getEvents", () => {
  const ctx = (series: Record<string, RangeSeries[]>) =>
    ({ metrics: { kind: "prometheus", range: async (q: string) => series[q] ?? [] } }) as unknown as ObserveContext;

  it("keeps the events of the page's service and handler (and those of no service), newest MAX_MARKERS, oldest first", async () => {
    const svc = `svc-${Math.random().toString(36).slice(2)}`;
    const now = Date.now();
    recordEvent("fault", "mine", { service: svc }, now - 1000);
    recordEvent("rebalance", "other handler", { service: svc, handler: "h2" }, now - 900);
    recordEvent("rebalance", "my handler", { service: svc, handler: "h1" }, now - 800);
    recordEvent("fault", "other service", { service: `${svc}-x` }, now - 700);
    const r = await getEvents(ctx({}), { range: "5m", service: svc, handler: "h1" }, now);
    expect(
      r.events
        .filter((e) => e.kind !== "silence" && e.kind !== "source" && e.labels.service === svc)
        .map((e) => e.title),
    ).toEqual(["mine", "my handler"]);
    expect(r.partial).toEqual([]);

    for (let i = 0; i < MAX_MARKERS + 5; i++) recordEvent("source", `toggle ${i}`, { service: svc }, now - 600 + i);
    const b = await getEvents(ctx({}), { range: "5m", service: svc }, now);
    expect(b.events).toHaveLength(MAX_MARKERS);
    // Events of no service concern every page; another file's rebalance may be among the newest.
    expect(b.events.filter((e) => e.labels.service === svc).at(-1)!.title).toBe(`toggle ${MAX_MARKERS + 4}`);
    expect(b.truncated).toBeGreaterThanOrEqual(5 + 3);
  });

  it("says which source failed and still answers the others", async () => {
    const failing = {
      metrics: { kind: "prometheus", range: async () => Promise.reject(new Error("prometheus: unreachable")) },
    } as unknown as ObserveContext;
    const r = await getEvents(failing, { range: "5m" });
    expect(r.partial).toEqual(["alert transitions: prometheus: unreachable", "restarts: prometheus: unreachable"]);
  });
});
