import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { handlersQuery, overviewQuery, seriesQuery } from "@/lib/query-options";
import { DEFAULT_VIEW_STATE } from "@/lib/url-state";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { prefetchPage, rangeOf } from "./prefetch-queries";

afterEach(() => setObserveContext(null));

describe("server-painted pages: the prefetched cache", () => {
  it("reads the range as the client does (a bad or missing one is the default)", () => {
    expect(rangeOf({ range: "6h" })).toBe("6h");
    expect(rangeOf({ range: ["24h", "5m"] })).toBe("24h");
    expect(rangeOf({ range: "1y" })).toBe(DEFAULT_VIEW_STATE.range);
    expect(rangeOf({})).toBe(DEFAULT_VIEW_STATE.range);
  });

  it("holds the overview, the key count and the series under the client's query keys, as plain JSON", async () => {
    const registry = new Registry();
    const metrics = new LocalSource(registry, { intervalMs: 100 }).start();
    setObserveContext(createObserveContext({ metrics, redis: null }));
    const state = await prefetchPage("15m", [
      { metric: "duplicate_ratio" },
      { metric: "processed_rate", service: "svc-a", handler: "h-1" },
      { metric: "duplicate_ratio", service: "x".repeat(201) },
    ]);
    const keys = state.queries.map((q) => JSON.stringify(q.queryKey));
    expect(keys).toContain(JSON.stringify(overviewQuery("15m", false).queryKey));
    // The key count every key figure of the page reads, painted with the page.
    expect(keys).toContain(JSON.stringify(handlersQuery(false).queryKey));
    expect(keys).toContain(JSON.stringify(seriesQuery({ metric: "duplicate_ratio", range: "15m" }, false).queryKey));
    expect(keys).toContain(
      JSON.stringify(
        seriesQuery({ metric: "processed_rate", range: "15m", service: "svc-a", handler: "h-1" }, false).queryKey,
      ),
    );
    // A name the API refuses is not prefetched (the browser gets the API's 400).
    expect(state.queries).toHaveLength(4);
    const overview = state.queries.find((q) => q.queryKey[0] === "overview")!.state.data as {
      range: string;
      source: string;
      handlers: unknown[];
    };
    expect(overview.range).toBe("15m");
    expect(overview.source).toBe("local");
    expect(Array.isArray(overview.handlers)).toBe(true);
    expect(state.queries.every((q) => q.state.status === "success")).toBe(true);
  });
});
