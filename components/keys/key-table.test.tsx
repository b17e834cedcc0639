import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { KeyTable } from "./key-table";

const key = (uuid: string, state: "done" | "marked") => ({
  key: `svc:dedup:h:${uuid}`,
  uuid,
  state,
  ttlMs: 86_400_000,
  bytes: 64,
  record: null,
  topic: "orders",
});

describe("the key table", () => {
  it("explains the design note's plain 1 as marked with no position, Watermill-style, and only the states it lists", () => {
    const html = renderToStaticMarkup(<KeyTable keys={[key("u1", "marked"), key("u2", "marked")]} caption="keys" />);
    expect(html).toContain('data-testid="key-state-legend"');
    expect(html).toContain("marked, no position: Watermill-style");
    expect(html).not.toContain("a lease: a consumer is running the handler now");
    // A key without a position searches its handler's topic for the UUID, not an empty one.
    expect(html).toContain("topic=orders");
  });

  it("shows no legend for an empty list", () => {
    expect(renderToStaticMarkup(<KeyTable keys={[]} caption="keys" />)).not.toContain("key-state-legend");
  });
});
