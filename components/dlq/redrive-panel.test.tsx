import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { RedriveResponse } from "@/lib/api/dlq";
import {
  afterRedrive,
  confirmText,
  redriveCounts,
  redriveDescription,
  RedrivePanel,
  RedriveResult,
} from "./redrive-panel";

const dry: RedriveResponse = {
  dryRun: true,
  matched: 120,
  complete: true,
  redriven: 0,
  skipped: 2,
  preview: [],
  skippedPreview: [],
  ratePerSecond: 50,
};

const panel = (filter: { handler?: string; reason?: string }) =>
  renderToStaticMarkup(
    <QueryClientProvider client={new QueryClient()}>
      <RedrivePanel filter={filter} />
    </QueryClientProvider>,
  );

describe("the re-drive panel", () => {
  it("preselects and explains a new UUID for payload conflicts, and each record's default otherwise", () => {
    const conflicts = panel({ reason: "payload_conflict" });
    expect(conflicts).toMatch(/<option value="new-uuid" selected="">/);
    expect(conflicts).toContain('data-testid="redrive-conflict-note"');
    const others = panel({ handler: "on-event" });
    expect(others).toMatch(/<option value="per-record" selected="">/);
    expect(others).not.toContain("redrive-conflict-note");
  });

  it("confirms in words: the selection, how many, the mode, the rate and how long, and what is skipped", () => {
    const text = confirmText("handler on-event, reason payload_conflict", dry, "new-uuid");
    expect(text).toContain(
      "Re-drive 120 messages from the DLQ, matching handler on-event, reason payload_conflict, back to their original topics",
    );
    expect(text).toContain("with a new UUID each");
    expect(text).toContain("at most 50 per second (about 3 s)");
    expect(text).toContain("2 matched records are skipped");
    expect(confirmText("", { ...dry, matched: 1, skipped: 0 }, "same-uuid")).toContain(
      "with the same UUID (payload conflicts are skipped: they would loop)",
    );
  });

  it("says where the records go and which ones in words, not 'matching every record' or 'their topic_poisoned'", () => {
    expect(redriveDescription("")).toMatch(
      /^Publishes every DLQ record back to the topic it was poisoned on \(its topic_poisoned header/,
    );
    expect(redriveDescription("handler on-event")).toContain(
      "Publishes the DLQ records matching handler on-event back",
    );
    const all = confirmText("", dry, "same-uuid");
    expect(all).toContain("Re-drive 120 messages from the DLQ back to their original topics");
    expect(all).not.toContain("matching");
  });

  it("after a real re-drive the DLQ list is read again (its rows then show as re-driven); a dry run leaves it", () => {
    const client = new QueryClient();
    client.setQueryData(["dlq", "topic=demo.events.dlq"], { records: [] });
    const shown: RedriveResponse[] = [];
    afterRedrive(client, dry, (r) => shown.push(r));
    expect(client.getQueryState(["dlq", "topic=demo.events.dlq"])?.isInvalidated).toBe(false);
    afterRedrive(client, { ...dry, dryRun: false, redriven: 118 }, (r) => shown.push(r));
    expect(client.getQueryState(["dlq", "topic=demo.events.dlq"])?.isInvalidated).toBe(true);
    expect(shown.map((r) => r.dryRun)).toEqual([true, false]);
  });

  it("says how many matched records were left alone because they were already re-driven or discarded", () => {
    const withResolved = { ...dry, notOpen: 7 };
    expect(confirmText("", withResolved, "same-uuid")).toContain("7 already re-driven or discarded are left alone.");
    expect(renderToStaticMarkup(<RedriveResult r={withResolved} />)).toContain(
      "7 left alone: already re-driven or discarded",
    );
    expect(renderToStaticMarkup(<RedriveResult r={dry} />)).not.toContain("left alone");
  });
});

describe("the re-drive counts count every matched record once", () => {
  const skipped = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ partition: 0, offset: String(i), uuid: null, why: "no UUID" }));
  it("five marshal records without a UUID: '5 matched, none can be re-driven: no UUID', not 'would re-drive 0 of 0 matched'", () => {
    const r = { ...dry, matched: 0, skipped: 5, skippedPreview: skipped(5) } as RedriveResponse;
    expect(redriveCounts(r)).toBe("Dry run: 5 matched, none can be re-driven: no UUID");
  });
  it("some of each: the sendable of the total, and why the others cannot go", () => {
    const r = { ...dry, matched: 3, skipped: 2, skippedPreview: skipped(2) } as RedriveResponse;
    expect(redriveCounts(r)).toBe(
      "Dry run: would re-drive 3 of 5 matched, at most 50/s; 2 cannot be re-driven: no UUID",
    );
    expect(redriveCounts({ ...r, dryRun: false, redriven: 3 })).toBe(
      "Re-drove 3 of 5 matched, at most 50/s; 2 cannot be re-driven: no UUID",
    );
    expect(redriveCounts({ ...dry, matched: 0, skipped: 0 })).toBe("Dry run: nothing matched");
  });
});
