import { describe, expect, it } from "vitest";
import type { AlertStateName } from "@/lib/api/common";
import type { OverviewHandler } from "@/lib/api/overview";
import { ALERT_NAMES } from "@/lib/thresholds";
import { DEFAULT_FLEET_VIEW, fleetRows, fleetViewPatch, parseFleetView } from "./fleet-view";

function h(
  service: string,
  handler: string,
  ratio: number | null,
  alert: AlertStateName = "inactive",
): OverviewHandler {
  return {
    service,
    handler,
    topics: [],
    ttlClass: null,
    duplicateRatio: { status: "ok", value: ratio },
    processedRate: { status: "ok", total: 10, byResult: { success: 10, error: 0, deduplicated: 0 } },
    checkLatency: { status: "ok", p50Seconds: 0.001, p99Seconds: 0.002 },
    errorRates: { status: "ok", byReason: {}, total: 0 },
    keys: { status: "unavailable", detail: "redis: not configured" },
    alerts:
      alert === "inactive"
        ? []
        : [
            {
              alert: ALERT_NAMES.duplicateRate,
              state: alert,
              labels: { service, handler },
              activeAt: null,
              firingSince: null,
              firesAt: null,
              value: null,
              severity: "ticket",
              summary: "",
            },
          ],
  } as OverviewHandler;
}

describe("fleet table order, filter and search", () => {
  const fleet = [
    h("svc-01", "h-01", 0.002),
    h("svc-01", "h-02", 0.3, "pending"),
    h("svc-02", "h-01", null),
    h("svc-02", "h-02", 0.05),
    h("svc-03", "h-01", 0.001, "firing"),
  ];

  it("worst first: firing, then pending, then by duplicate ratio, handlers without traffic last", () => {
    expect(fleetRows(fleet, DEFAULT_FLEET_VIEW).map((r) => r.id)).toEqual([
      "svc-03/h-01",
      "svc-01/h-02",
      "svc-02/h-02",
      "svc-01/h-01",
      "svc-02/h-01",
    ]);
  });

  it("by name, filtered by service, searched by handler (case-insensitive substring of service/handler)", () => {
    expect(fleetRows(fleet, { ...DEFAULT_FLEET_VIEW, sort: "name" }).map((r) => r.id)[0]).toBe("svc-01/h-01");
    expect(fleetRows(fleet, { ...DEFAULT_FLEET_VIEW, service: "svc-02" }).map((r) => r.id)).toEqual([
      "svc-02/h-02",
      "svc-02/h-01",
    ]);
    expect(fleetRows(fleet, { ...DEFAULT_FLEET_VIEW, search: "H-02" }).map((r) => r.id)).toEqual([
      "svc-01/h-02",
      "svc-02/h-02",
    ]);
    expect(fleetRows(fleet, { ...DEFAULT_FLEET_VIEW, search: "svc-01/h-01" }).map((r) => r.id)).toEqual([
      "svc-01/h-01",
    ]);
  });

  it("the URL carries sort, service and q; defaults are left out; bad values fall back", () => {
    expect(fleetViewPatch({ sort: "worst", service: null, search: "" })).toEqual({
      sort: null,
      service: null,
      q: null,
    });
    expect(fleetViewPatch({ sort: "p99", service: "svc-07", search: "h-0" })).toEqual({
      sort: "p99",
      service: "svc-07",
      q: "h-0",
    });
    expect(parseFleetView(new URLSearchParams("sort=p99&service=svc-07&q=h-0"))).toEqual({
      sort: "p99",
      service: "svc-07",
      search: "h-0",
    });
    expect(parseFleetView(new URLSearchParams("sort=bogus&service=a/b"))).toEqual(DEFAULT_FLEET_VIEW);
  });
});
