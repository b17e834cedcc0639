import { describe, expect, it } from "vitest";
import { hotKeysResponseSchema } from "@/lib/api/hot-keys";
import { getHotKeys } from "./hot-keys";
import { PrometheusSource } from "../metrics/prometheus";
import { freePort } from "@/server/testing/net";

describe("GET /api/hot-keys over the fleet", () => {
  it("answers while Prometheus is down: the table is unavailable with the reason (no error status for the page to log)", async () => {
    const port = await freePort(); // nothing listens there
    const body = hotKeysResponseSchema.parse(
      await getHotKeys({ metrics: new PrometheusSource(`http://127.0.0.1:${port}`) }, { service: "svc", handler: "h" }),
    );
    expect(body.scope).toBe("fleet");
    expect(body.unavailable).toMatch(/^prometheus: /);
    expect(body.keys).toEqual([]);
    expect(body.notMeasured).toBeNull();
  });

  it("a handler whose keys are outside DEDUP_PREFIXES is a 403 that names the rule: its key names are not listed", async () => {
    const port = await freePort();
    const ctx = { metrics: new PrometheusSource(`http://127.0.0.1:${port}`), prefixes: ["billing:dedup:*"] };
    await expect(getHotKeys(ctx, { service: "payments", handler: "h" })).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/outside DEDUP_PREFIXES \(billing:dedup:\*\)/),
    });
    expect((await getHotKeys(ctx, { service: "billing", handler: "h" })).unavailable).toMatch(/^prometheus: /);
  });
});
