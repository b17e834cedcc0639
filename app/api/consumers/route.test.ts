import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "@/server/config";
import { GET } from "./route";

type G = typeof globalThis & { __dedupHealthConfig?: unknown; __dedupHealthConsumers?: unknown };
const g = globalThis as G;
const saved = g.__dedupHealthConfig;
afterEach(() => {
  g.__dedupHealthConfig = saved;
  delete g.__dedupHealthConsumers;
});

describe("GET /api/consumers", () => {
  it("400 { error, detail } naming the parameter for a bad topic or group", async () => {
    for (const q of ["topic=bad%20topic", "topic=" + "x".repeat(250), "group=has%20space"]) {
      const res = await GET(new Request(`http://localhost/api/consumers?${q}`));
      expect(res.status, q).toBe(400);
      const body = (await res.json()) as { error: string; detail: string };
      expect(body.error).toBe("bad_request");
      expect(body.detail).toMatch(/^(topic|group): expected/);
    }
  });

  it("503 saying what to set when Kafka is not configured", async () => {
    g.__dedupHealthConfig = parseConfig({});
    const res = await GET(new Request("http://localhost/api/consumers"));
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "unavailable", detail: expect.stringMatching(/KAFKA_BROKERS/) });
  });

  it("503 saying Kafka is configured and does not answer, the broker hidden from a viewer who may not see it", async () => {
    // Right after the "not configured" answer above (cached for 1 s): a new configuration gets its own answer.
    g.__dedupHealthConfig = parseConfig({ KAFKA_BROKERS: "127.0.0.1:1" });
    const res = await GET(new Request("http://localhost/api/consumers?topic=demo.events"));
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: string; detail: string };
    expect(body.error).toBe("unavailable");
    expect(body.detail).toMatch(/^kafka: cannot connect to <kafka>: /);
    expect(body.detail).not.toMatch(/not configured|127\.0\.0\.1/);
  }, 20_000);

  it("503 naming the broker to a local viewer when SHOW_UPSTREAM_DETAIL=on", async () => {
    const origin = process.env.__NEXT_PRIVATE_ORIGIN;
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000"; // what `next start -H 127.0.0.1` sets: listening on loopback only
    try {
      g.__dedupHealthConfig = parseConfig({ KAFKA_BROKERS: "127.0.0.1:1", SHOW_UPSTREAM_DETAIL: "on" });
      const res = await GET(
        new Request("http://localhost/api/consumers?topic=demo.events", {
          headers: { host: "localhost", "x-forwarded-for": "127.0.0.1" },
        }),
      );
      expect(res.status).toBe(503);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/^kafka: cannot connect to 127\.0\.0\.1:1: /);
    } finally {
      if (origin === undefined) delete process.env.__NEXT_PRIVATE_ORIGIN;
      else process.env.__NEXT_PRIVATE_ORIGIN = origin;
    }
  }, 20_000);
});
