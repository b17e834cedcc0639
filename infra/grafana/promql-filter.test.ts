import { describe, expect, it } from "vitest";
import { checkQuantileExpr, duplicateRatioExpr, errorRateExpr } from "@/lib/alert-exprs";
import { PROMQL } from "@/lib/named-queries";
import { withMatchers } from "./promql-filter";

const SVC = 'service=~"$service"';
const BOTH = 'service=~"$service", handler=~"$handler"';

describe("withMatchers: an alert's PromQL, following the dashboard variables", () => {
  it("gives the same text as the expression builders' own matchers argument", () => {
    expect(withMatchers(duplicateRatioExpr(), BOTH)).toBe(duplicateRatioExpr(BOTH));
    expect(withMatchers(errorRateExpr(), SVC)).toBe(errorRateExpr(SVC));
    expect(withMatchers(checkQuantileExpr(0.99), SVC)).toBe(checkQuantileExpr(0.99, SVC));
  });

  it("puts the matchers before existing ones, leaves strings, ranges, label lists and numbers alone", () => {
    expect(withMatchers(PROMQL.new_rate, SVC)).toBe(
      'sum by (service, topic, handler) (rate(messages_processed_total{service=~"$service", result!="deduplicated"}[5m]))',
    );
    expect(withMatchers("max by (service, replica, instance) (dedup_consumer_info)", SVC)).toBe(
      'max by (service, replica, instance) (dedup_consumer_info{service=~"$service"})',
    );
    expect(withMatchers('a / on (service) group_left (x) b{c="{d}"} > 1e-6 offset 5m', SVC)).toBe(
      'a{service=~"$service"} / on (service) group_left (x) b{service=~"$service", c="{d}"} > 1e-6 offset 5m',
    );
    expect(withMatchers(PROMQL.dlq_rate, "")).toBe(PROMQL.dlq_rate);
  });
});
