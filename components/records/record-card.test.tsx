import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { RecordView } from "@/lib/api/records";
import { RecordCard } from "./record-card";

const record: RecordView = {
  topic: "billing.events",
  partition: 0,
  offset: "7",
  timestamp: "2026-01-01T00:00:00.000Z",
  key: null,
  headers: [
    { key: "x-tenant", value: { encoding: "utf-8", text: "***" } },
    { key: "Event-Type", value: { encoding: "utf-8", text: "card.charged" } },
  ],
  payload: { encoding: "utf-8", text: '{"card":{"number":"***"}}' },
  size: 80,
  uuid: "u-1",
};

describe("the record card", () => {
  it("says what the caller's role sees masked: a line listing it, a badge on the payload and on each masked header", () => {
    const html = renderToStaticMarkup(
      <RecordCard
        record={{
          ...record,
          masked: [
            { in: "payload", field: "/card/number", action: "MASK" },
            { in: "header", field: "x-tenant", action: "MASK" },
            { in: "header", field: "x-user-email", action: "REMOVE" },
          ],
        }}
      />,
    );
    expect(html).toContain('data-testid="record-masked"');
    expect(html).toContain("payload /card/number masked; header x-tenant masked; header x-user-email removed");
    // One badge on the payload heading, one on the masked header; none on Event-Type.
    expect(html.match(/data-testid="masked-badge"/g)).toHaveLength(2);
  });

  it("shows no masking note to a caller who sees the record whole", () => {
    const html = renderToStaticMarkup(<RecordCard record={record} />);
    expect(html).not.toContain("masked-badge");
    expect(html).not.toContain("record-masked");
  });
});
