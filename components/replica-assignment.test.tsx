import { describe, expect, it } from "vitest";
import { FLEET_SORT_LABELS } from "@/lib/fleet-view";
import { REPLICA_COLUMNS } from "./replica-assignment";

describe("one label, one figure: the replicas' committed rate is not the handler's Processed", () => {
  it("the replica table's rate column says it counts records committed, every event type included", () => {
    const labels = REPLICA_COLUMNS.map((c) => c.label);
    expect(labels).not.toContain("Processed");
    const rate = REPLICA_COLUMNS.find((c) => c.label === "Records committed");
    expect(rate && "title" in rate ? rate.title : "").toMatch(/every event type/);
  });
  it("the overview's and the fleet table's Processed name their 5-min window", () => {
    expect(FLEET_SORT_LABELS.rate).toBe("Processed (5 min)");
  });
});
