import { describe, expect, it } from "vitest";
import { decodable, discoverRoutes, exportedMethods } from "./fuzz-api";

describe("fuzz-api", () => {
  it("discovers every route of app/ with the methods its route.ts exports, and the pages", () => {
    const routes = discoverRoutes();
    const by = new Map(routes.map((r) => [r.template, r]));
    expect(by.get("/api/keys")?.methods).toEqual(["GET"]);
    expect(by.get("/api/demo/faults")?.methods.sort()).toEqual(["GET", "PUT"]);
    expect(by.get("/api/workshop/scenarios/[name]/runs")?.methods).toEqual(["POST"]);
    expect(by.get("/handlers/[service]/[handler]")?.kind).toBe("page");
    expect(by.get("/")?.kind).toBe("page");
    expect(routes.filter((r) => r.kind === "api").length).toBeGreaterThanOrEqual(12);
    // A route whose exports it cannot read would never be fuzzed.
    expect(routes.filter((r) => r.kind === "api" && r.methods.length === 0).map((r) => r.template)).toEqual([]);
  });

  it("reads a route's methods in every export form Next.js accepts", () => {
    expect(exportedMethods("export async function GET() {}\nexport function POST() {}")).toEqual(["GET", "POST"]);
    expect(exportedMethods("export const DELETE = handle;\nexport const dynamic = 'force-dynamic';")).toEqual([
      "DELETE",
    ]);
    expect(exportedMethods("export const { GET, PUT } = demoSwitchRoute(a, b);").sort()).toEqual(["GET", "PUT"]);
    expect(exportedMethods("export const { handler: PATCH } = x;")).toEqual(["PATCH"]);
  });

  it("tells a path Next.js cannot decode from one it can", () => {
    expect(decodable("/handlers/notification/on-review-created")).toBe(true);
    expect(decodable("/handlers/%E6%97%A5/x%20y")).toBe(true);
    expect(decodable("/handlers/%/x")).toBe(false);
    expect(decodable("/api/workshop/scenarios/%ED%A0%80/runs")).toBe(false);
  });
});
