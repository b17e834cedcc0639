import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEADMAN_ALERTS } from "@/lib/deadman-alerts";
import { durationSeconds, scaleDeadmanRules } from "./scaled-rules";

const RULES = readFileSync(join(__dirname, "../../infra/prometheus/rules/dedup.yml"), "utf8");

describe("the deadman rules' time constants divided for a fast run", () => {
  it("factor 1 gives the generated file back, byte for byte", () => {
    expect(scaleDeadmanRules(RULES, 1)).toEqual({ text: RULES, edits: [] });
  });

  it("divides the thresholds in seconds, the for durations and the last-seen step of the deadman rules only", () => {
    const { edits } = scaleDeadmanRules(RULES, 20);
    const by = (what: string) => edits.filter((e) => e.what === what).map((e) => `${e.alert} ${e.from}->${e.to}`);
    expect(by("threshold").sort()).toEqual(["DedupConsumerSilent 300->15", "DedupFleetGaugesMissing 180->9"]);
    // `for: 0m` divided is 0m: unchanged, so not an edit.
    expect(by("for")).toEqual(["DedupDashboardDown 2m->6s"]);
    expect(by("step").sort()).toEqual([
      "DedupConsumerSilent 60->3",
      "DedupConsumerSilent 60s->3s",
      "DedupFleetGaugesMissing 60->3",
      "DedupFleetGaugesMissing 60s->3s",
    ]);
    expect(new Set(edits.map((e) => e.alert))).toEqual(new Set(Object.values(DEADMAN_ALERTS).map((a) => a.name)));
  });

  it("writes a duration that does not divide into whole seconds in milliseconds, and refuses one that is not a whole number of milliseconds", () => {
    expect(scaleDeadmanRules(RULES, 16).text).toMatch(/for: 7500ms/);
    expect(() => scaleDeadmanRules(RULES, 7)).toThrow(/not a whole number of ms/);
    expect(durationSeconds("2m")).toBe(120);
  });

  it("refuses a rule file whose deadman rule is missing or no longer has the generated threshold", () => {
    expect(() => scaleDeadmanRules(RULES.replace("- alert: DedupDashboardDown", "- alert: Other"), 20)).toThrow(
      /no rule DedupDashboardDown/,
    );
    const silent = DEADMAN_ALERTS.consumerSilent.threshold.value;
    expect(() => scaleDeadmanRules(RULES.replace(`> ${silent}\n`, `> ${silent + 1}\n`), 20)).toThrow(
      /DedupConsumerSilent: its expr does not end with/,
    );
  });
});
