import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, fetchJson, keysInfiniteQuery, seriesQuery } from "./query-options";

afterEach(() => vi.unstubAllGlobals());

function stubFetch(status: number, body: string) {
  const f = vi.fn(
    async (_url: string, _init?: RequestInit) =>
      new Response(body, { status, headers: { "content-type": "application/json" } }),
  );
  vi.stubGlobal("fetch", f);
  return f;
}

describe("fetchJson: a non-2xx answer becomes an ApiError with the server's detail", () => {
  it("returns the parsed body on 200", async () => {
    stubFetch(200, JSON.stringify({ ok: 1 }));
    await expect(fetchJson("/api/x")).resolves.toEqual({ ok: 1 });
  });
  it("keeps { error, detail } and extra fields (a workshop 409 names the running run)", async () => {
    stubFetch(409, JSON.stringify({ error: "conflict", detail: "retry-on-error is running", runId: "r1" }));
    const e = (await fetchJson("/api/workshop/scenarios/retry-on-error/runs").catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect([e.status, e.code, e.detail, e.body.runId]).toEqual([409, "conflict", "retry-on-error is running", "r1"]);
  });
  it("a 404 without a body says the route is not on this server", async () => {
    stubFetch(404, "<html>not found</html>");
    const e = (await fetchJson("/api/workshop/scenarios?x=1").catch((x: unknown) => x)) as ApiError;
    expect([e.status, e.code, e.detail]).toEqual([
      404,
      "not_found",
      "/api/workshop/scenarios is not available on this server",
    ]);
  });
  it("no answer at all is status 0, code network", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => Promise.reject(new TypeError("fetch failed"))),
    );
    const e = (await fetchJson("/api/overview").catch((x: unknown) => x)) as ApiError;
    expect([e.status, e.code]).toEqual([0, "network"]);
    expect(e.detail).toMatch(/did not answer: fetch failed/);
  });
});

describe("query options", () => {
  it("series: filters in the URL and the key, so the overview's unfiltered query is shared", async () => {
    const f = stubFetch(200, "{}");
    const q = seriesQuery(
      { metric: "duplicate_ratio", range: "6h", service: "notification", handler: "on-page-viewed" },
      5000,
    );
    expect(q.queryKey).toEqual(["series", "duplicate_ratio", "6h", "notification", "on-page-viewed"]);
    expect(q.refetchInterval).toBe(5000);
    await q.queryFn!({ signal: new AbortController().signal } as never);
    expect(f.mock.calls[0]![0]).toBe(
      "/api/series?metric=duplicate_ratio&range=6h&service=notification&handler=on-page-viewed",
    );
    expect(seriesQuery({ metric: "error_rate", range: "1h" }, false).queryKey).toEqual([
      "series",
      "error_rate",
      "1h",
      null,
      null,
    ]);
  });
  it("keys: the server's cursor drives the next page; a null cursor ends the scan", async () => {
    const f = stubFetch(200, "{}");
    const q = keysInfiniteQuery("notification:dedup:on-page-viewed", 50);
    expect(q.getNextPageParam({ cursor: "0@12" } as never, [], "", [])).toBe("0@12");
    expect(q.getNextPageParam({ cursor: null } as never, [], "", [])).toBeUndefined();
    await q.queryFn!({ signal: new AbortController().signal, pageParam: "0@12" } as never);
    expect(f.mock.calls[0]![0]).toBe("/api/keys?prefix=notification%3Adedup%3Aon-page-viewed&count=50&cursor=0%4012");
  });
});
