import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { HandlerSelfResponse } from "@/lib/api/handlers";
import { SelfView } from "./handler-self";

const unknown = (field: string, what: string) => ({
  status: "unknown" as const,
  needs: `dedup_handler_info (${field})`,
  detail: `declares no ${what}: export dedup_handler_info`,
});

/** A handler that exports no dedup_handler_info: keys that live 24 h, a topic from its metrics, no Kafka group read. */
const UNDECLARED: HandlerSelfResponse = {
  generatedAt: "2026-12-07T13:00:00.000Z",
  service: "acme",
  handler: "notify",
  declaration: {
    status: "unknown",
    needs: "dedup_handler_info",
    detail: "declares nothing: export dedup_handler_info",
  },
  infoRead: { status: "up", detail: "2 handlers declare dedup_handler_info" },
  ttl: {
    status: "ok",
    ms: 86_340_000,
    msSource: "observed",
    ttlClass: "default",
    classSource: "inferred",
    text: "default, inferred: keys live 24 h",
  },
  lease: unknown("lease_ms", "lease"),
  timeout: unknown("timeout_ms", "attempt limit"),
  marking: unknown("marking", "marking"),
  failureMode: unknown("failure_mode", "failure mode"),
  stack: unknown("stack", "stack"),
  topic: { status: "ok", value: "acme.events", source: "metrics" },
  prefix: { value: "acme:dedup:notify", source: "convention" },
  group: { id: "acme.notify", source: "convention" },
  window: { status: "unknown", needs: "dedup keys", detail: "no settled key sampled yet" },
  lint: { status: "unknown", needs: "dedup_handler_info", detail: "declares nothing: export dedup_handler_info" },
  consumerGroup: { status: "unavailable", detail: "kafka: not configured (set KAFKA_BROKERS)" },
};

describe("the Declared setup panel", () => {
  it("says for every part a handler does not declare that it is unknown, why, and what to export — never a blank — and says what it inferred", () => {
    const html = renderToStaticMarkup(<SelfView d={UNDECLARED} />);
    for (const what of ["lease", "attempt limit", "marking", "failure mode", "stack"])
      expect(html).toContain(`unknown: declares no ${what}: export dedup_handler_info`);
    expect(html).toContain("unknown: declares nothing: export dedup_handler_info");
    expect(html).toContain("default, inferred: keys live 24 h");
    expect(html).toContain("from its metrics&#x27; topic label");
    expect(html).toContain("&lt;service&gt;.&lt;handler&gt;, not declared");
    expect(html).toContain("unavailable: kafka: not configured");
    // Every row carries a value or says unknown.
    expect(html.match(/<dd><\/dd>/g)).toBeNull();
  });

  it("shows a declared setup and its consumer group's members and partitions", () => {
    const html = renderToStaticMarkup(
      <SelfView
        d={{
          ...UNDECLARED,
          declaration: { status: "ok", source: "info", runtime: "jvm", contract: "1" },
          lease: { status: "ok", ms: 30_000, text: "30 s lease" },
          marking: { status: "ok", value: "lease" },
          group: { id: "billing-workers", source: "declared" },
          consumerGroup: {
            status: "ok",
            topic: "orders",
            view: {
              groupId: "billing-workers",
              state: "Stable",
              protocol: "RangeAssignor",
              members: [
                {
                  memberId: "m1",
                  clientId: "c1",
                  replica: "pod-a",
                  host: "10.0.0.1",
                  partitions: [0, 1, 2],
                  lag: 6,
                  processedPerSecond: null,
                },
              ],
              partitions: [],
              totalLag: 6,
              unassigned: [],
              overlapping: [],
              rateWindowSeconds: null,
            },
          },
        }}
      />,
    );
    expect(html).toContain("dedup_handler_info (jvm, contract 1)");
    expect(html).toContain("30 s lease");
    expect(html).toContain("billing-workers");
    expect(html).toContain("pod-a: partitions 0, 1, 2 · lag 6");
    expect(html).toContain("lag 6");
  });

  it("says a Kafka-transactions handler's window and lease do not apply, not that they are unknown", () => {
    const na = { status: "n/a" as const, detail: "does not apply (transactions mode)" };
    const html = renderToStaticMarkup(
      <SelfView
        d={{
          ...UNDECLARED,
          ttl: na,
          window: na,
          lease: { status: "ok", ms: null, text: na.detail },
          marking: { status: "ok", value: "kafka-transaction" },
        }}
      />,
    );
    expect(html).toMatch(/data-testid="self-ttl" data-status="n\/a">.*does not apply \(transactions mode\)/);
    expect(html).toMatch(/data-testid="self-window" data-status="n\/a">.*does not apply \(transactions mode\)/);
    expect(html).not.toContain("unknown: does not apply");
    expect(html).toContain("kafka-transaction");
    expect(html.match(/<dd><\/dd>/g)).toBeNull();
  });

  it("says how old the keys are against their TTL and until when, not '0.01 % filled' and a US-locale date", () => {
    const validAt = new Date(Date.now() + 7 * 86_400_000 - 60_000).toISOString();
    const html = renderToStaticMarkup(
      <SelfView
        d={{
          ...UNDECLARED,
          window: { status: "ok", ageMs: 60_000, filled: 1 / 10_080, validAt, source: "oldest-key" },
        }}
      />,
    );
    expect(html).toMatch(
      /keys 1 min old \(oldest key in the store\) of a 7 d TTL: until \w{3} \d+ \d\d:\d\d the projection/,
    );
    expect(html).not.toMatch(/% filled|AM|PM/);
  });
});
