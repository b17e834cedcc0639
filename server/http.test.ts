import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "./config";
import { answer, fail, guard } from "./http";
import { TOKEN_FAILURES } from "./token-failures";

type G = typeof globalThis & { __dedupHealthConfig?: unknown };
const g = globalThis as G;
const saved = g.__dedupHealthConfig;
const savedOrigin = process.env.__NEXT_PRIVATE_ORIGIN;
afterEach(() => {
  g.__dedupHealthConfig = saved;
  if (savedOrigin === undefined) delete process.env.__NEXT_PRIVATE_ORIGIN;
  else process.env.__NEXT_PRIVATE_ORIGIN = savedOrigin;
});

const PROM = "http://promUser:promPass9@prom.internal:9090";
/** An upstream error as the overview, series and alerts answers carry it. */
const body = () => ({
  upstream: { prometheus: { status: "down", detail: `prometheus: GET ${PROM}/api/v1/query failed: ECONNREFUSED` } },
});
/** What Next's server passes on for a browser on this machine (the socket's address in X-Forwarded-For). */
const local = { host: "localhost:3000", "x-forwarded-for": "127.0.0.1" };

describe("answer / fail: upstream detail only for a local viewer with SHOW_UPSTREAM_DETAIL=on", () => {
  const req = (headers: Record<string, string>) => new Request("http://localhost:3000/api/overview", { headers });
  const detailOf = async (res: Response) => JSON.stringify(await res.json());

  it("redacts for everybody by default, the local viewer included", async () => {
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
    g.__dedupHealthConfig = parseConfig({ PROMETHEUS_URL: PROM });
    const text = await detailOf(answer(req(local), body()));
    expect(text).toContain("<prometheus>");
    expect(text).not.toMatch(/promPass9|promUser|prom\.internal/);
    expect(await detailOf(fail(req(local), 503, "unavailable", `prometheus: ${PROM} ECONNREFUSED`))).not.toContain(
      "promPass9",
    );
  });

  it("shows it to a local viewer when the option is on", async () => {
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
    g.__dedupHealthConfig = parseConfig({ PROMETHEUS_URL: PROM, SHOW_UPSTREAM_DETAIL: "on" });
    expect(await detailOf(answer(req(local), body()))).toContain("prom.internal:9090");
    expect(await detailOf(fail(req(local), 503, "unavailable", `prometheus: ${PROM} ECONNREFUSED`))).toContain(
      "prom.internal",
    );
  });

  it("never to a viewer that only claims to be local, nor when the app listens beyond loopback", async () => {
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
    g.__dedupHealthConfig = parseConfig({ PROMETHEUS_URL: PROM, SHOW_UPSTREAM_DETAIL: "on" });
    const claims: Array<Record<string, string>> = [
      { host: "localhost:3000", "x-forwarded-for": "203.0.113.7, 127.0.0.1" }, // a proxy in front, not trusted
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", "x-real-ip": "203.0.113.7" },
      { host: "dashboard.example.com", "x-forwarded-for": "127.0.0.1" },
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", origin: "https://evil.example" },
    ];
    for (const headers of claims) {
      const text = await detailOf(answer(req(headers), body()));
      expect(text, JSON.stringify(headers)).not.toMatch(/promPass9|prom\.internal/);
    }
    process.env.__NEXT_PRIVATE_ORIGIN = "http://0.0.0.0:3000";
    expect(await detailOf(answer(req(local), body()))).not.toMatch(/prom\.internal/);
  });
});

describe("guard: wrong tokens are limited for all callers together", () => {
  it("after a burst of wrong tokens every token waits (429 + Retry-After), the right one too; no token stays a 401", async () => {
    delete (globalThis as { __dedupHealthTokenFailures?: unknown }).__dedupHealthTokenFailures;
    const TOKEN = "the-right-token-0123456789";
    g.__dedupHealthConfig = parseConfig({ WORKSHOP_TOKEN: TOKEN });
    const req = (authorization?: string, from = "203.0.113.9") =>
      new Request("http://localhost:3000/api/demo/faults", {
        method: "PUT",
        headers: { ...local, "x-forwarded-for": from, ...(authorization ? { authorization } : {}) },
      });
    expect(guard(req(`Bearer ${TOKEN}`))).toBeNull();
    const statuses = Array.from(
      { length: TOKEN_FAILURES.burst + 5 },
      (_, i) => guard(req(`Bearer guess-${i}-xxxxxxxxxxxx`, `198.51.100.${i}`))!.status,
    );
    expect(statuses.slice(0, TOKEN_FAILURES.burst)).toEqual(Array(TOKEN_FAILURES.burst).fill(401));
    expect(statuses.slice(TOKEN_FAILURES.burst)).toEqual(Array(5).fill(429));
    const right = guard(req(`Bearer ${TOKEN}`))!;
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await right.json()).toMatchObject({ error: "rate_limited" });
    expect(guard(req())!.status).toBe(401);
    delete (globalThis as { __dedupHealthTokenFailures?: unknown }).__dedupHealthTokenFailures;
  });
});
