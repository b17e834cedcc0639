/**
 * `PROMETHEUS_URL=http://user:pass@host:port`: `fetch` refuses a URL with credentials, so the
 * client strips the userinfo and sends it as `Authorization: Basic`. Checked against a local HTTP
 * server that answers only with the right header, as a Prometheus behind basic auth does.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redact } from "@/server/redact";
import { PrometheusSource, prometheusEndpoint } from "./prometheus";

const USER = "prom user";
const PASS = "s3cr:et@9";
let server: Server;
let port = 0;
const seen: Array<{ url: string; authorization: string | undefined }> = [];

function authorized(req: IncomingMessage): boolean {
  return req.headers.authorization === `Basic ${Buffer.from(`${USER}:${PASS}`).toString("base64")}`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", authorization: req.headers.authorization });
    if (!authorized(req)) {
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": 'Basic realm="prometheus"' });
      res.end(JSON.stringify({ status: "error", error: "Unauthorized" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        status: "success",
        data: { resultType: "vector", result: [{ metric: { service: "svc", handler: "h" }, value: [1, "0.25"] }] },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const withCreds = () => `http://${encodeURIComponent(USER)}:${encodeURIComponent(PASS)}@127.0.0.1:${port}/`;

describe("PROMETHEUS_URL with user:pass@", () => {
  it("strips the userinfo from the URL and sends it as Authorization: Basic (percent-decoded)", () => {
    const e = prometheusEndpoint(`http://a%40b:p%3Aw@prom.example:9090/prefix/`);
    expect(e.base).toBe("http://prom.example:9090/prefix");
    expect(Buffer.from(e.headers.authorization!.replace(/^Basic /, ""), "base64").toString()).toBe("a@b:p:w");
    expect(prometheusEndpoint("http://127.0.0.1:9090").headers).toEqual({});
  });

  it("queries a Prometheus behind basic auth: the server gets the header, the URL carries no credentials", async () => {
    seen.length = 0;
    const src = new PrometheusSource(withCreds(), { cacheTtlMs: 0 });
    const samples = await src.instant("duplicate_ratio");
    expect(samples).toEqual([{ labels: { service: "svc", handler: "h" }, value: 0.25 }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url.startsWith("/api/v1/query?")).toBe(true);
    expect(authorized({ headers: { authorization: seen[0]!.authorization } } as IncomingMessage)).toBe(true);
  });

  it("a wrong password is a clear 401 error that names neither the password nor the user", async () => {
    const url = `http://${encodeURIComponent(USER)}:wrong-pass@127.0.0.1:${port}`;
    const err = await new PrometheusSource(url, { cacheTtlMs: 0 }).instant("duplicate_ratio").then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/HTTP 401/);
    const shown = redact(err!.message, { PROMETHEUS_URL: url });
    expect(shown).not.toContain("wrong-pass");
    expect(shown).not.toContain(String(port));
  });
});
