import { renderToStaticMarkup } from "react-dom/server";
import { formatInstant } from "@/lib/clock-time";
import { describe, expect, it } from "vitest";
import type { AlertRule } from "@/lib/api/alerts";
import { AlertBadge, badgeInstant } from "./alert-badge";
import { AlertCards, threshold } from "./alert-rules";

const unknown = { since: "2026-12-02T07:31:02.000Z", lastKnownAt: "2026-12-02T07:30:55.000Z" };
const clock = (iso: string) => formatInstant(iso);
const text = (html: string) => html.replace(/<[^>]+>/g, "");

describe("AlertBadge: a rule state that cannot be read is unknown, not inactive", () => {
  it("says unknown with since when and the last known state and its time", () => {
    const t = text(renderToStaticMarkup(<AlertBadge state="firing" unknown={unknown} />));
    expect(t).toContain(`unknown (Prometheus unavailable since ${clock(unknown.since)})`);
    expect(t).toContain(`last known: firing at ${clock(unknown.lastKnownAt)}`);
    expect(renderToStaticMarkup(<AlertBadge state="inactive" unknown={unknown} />)).toContain('data-state="unknown"');
  });

  it("without a read before the outage it says so instead of a state", () => {
    const t = text(
      renderToStaticMarkup(<AlertBadge state="inactive" unknown={{ since: unknown.since, lastKnownAt: null }} />),
    );
    expect(t).toContain("no state read yet");
    expect(t).not.toContain("last known");
  });

  it("a readable state stays the plain badge", () => {
    const html = renderToStaticMarkup(<AlertBadge state="inactive" />);
    expect(html).toContain('data-state="inactive"');
    expect(text(html)).not.toContain("unknown");
  });

  it("the overview's rule cards pass the unknown state to every badge", () => {
    const rule: AlertRule = {
      alert: "DedupRedisErrors",
      state: "pending",
      title: "t",
      expr: "e",
      for: "1m",
      threshold: 0,
      unit: "per_second",
      runbookUrl: "/r",
      evaluationIntervalMs: 5000,
      instances: [],
    };
    const html = renderToStaticMarkup(
      <AlertCards rules={[rule, { ...rule, alert: "DedupRedisLatencyHigh", state: "inactive" }]} unknown={unknown} />,
    );
    expect(html.match(/data-state="unknown"/g)).toHaveLength(2);
    expect(html).not.toContain('data-state="inactive"');
    expect(text(html)).toContain("last known: pending");
  });
});

describe("AlertBadge's countdown runs at the clock's speed", () => {
  it("84 s after mount, a badge without an answer time shows an instant 84 s later (it was 168 s: the elapsed time added to a moving clock)", () => {
    const mounted = Date.parse("2026-12-07T10:00:00Z");
    expect(badgeInstant(undefined, 84_000, mounted + 84_000) - mounted).toBe(84_000);
    // With the answer's time, the elapsed time runs it on.
    const answer = mounted - 3_000;
    expect(badgeInstant(answer, 84_000, mounted + 84_000) - answer).toBe(84_000);
  });
});

describe("a rule card states its threshold in the rule's unit", () => {
  it("the lag rule counts messages/s, not errors/s; a rule without a hold fires at once, not 'for 0m'", () => {
    expect(threshold({ alert: "DedupConsumerLagGrowing", unit: "per_second", threshold: 0, for: "10m" })).toBe(
      "> 0 messages/s for 10m",
    );
    expect(threshold({ alert: "DedupRedisErrors", unit: "per_second", threshold: 0, for: "1m" })).toBe(
      "> 0 errors/s for 1m",
    );
    expect(threshold({ alert: "DedupLeaseLost", unit: "per_second", threshold: 0, for: "0m" })).toBe(
      "> 0 runs/s at once",
    );
  });
});
