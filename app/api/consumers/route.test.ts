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

  it("503 naming the brokers when Kafka does not answer", async () => {
    g.__dedupHealthConfig = parseConfig({ KAFKA_BROKERS: "127.0.0.1:1" });
    const res = await GET(new Request("http://localhost/api/consumers?topic=demo.events"));
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: string; detail: string };
    expect(body.error).toBe("unavailable");
    expect(body.detail).toMatch(/kafka: .*127\.0\.0\.1:1/);
  }, 20_000);
});
