import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  endpointOf,
  endpoints,
  renderRouteTable,
  REPO_ROOT,
  routeBuilders,
  TABLE_END,
  TABLE_START,
  withRouteTable,
} from "./route-table";

const README = join(REPO_ROOT, "server/observe/README.md");

describe("server/observe README route table", () => {
  it("is the one generated from lib/api/ and routes/", () => {
    const readme = readFileSync(README, "utf8");
    const expected = withRouteTable(readme, renderRouteTable());
    expect(
      readme,
      "server/observe/README.md's route table is stale: run `npx tsx server/observe/route-table.ts --write` (renderRouteTable in server/observe/route-table.ts)",
    ).toBe(expected);
  });

  it("pairs every route builder with its lib/api/<endpoint>.ts and the app route that calls it", () => {
    const builders = routeBuilders();
    expect(builders.length).toBeGreaterThan(15);
    for (const b of builders) {
      expect(b.shapes, `${b.file}: no lib/api/<endpoint>.ts fits its name`).not.toBeNull();
      const route = join(REPO_ROOT, "app", b.path.replace(/\{(\w+)\}/g, "[$1]"), "route.ts");
      expect(existsSync(route), `${b.method} ${b.path} (${b.builder}): no ${route}`).toBe(true);
      expect(readFileSync(route, "utf8"), `${route} does not call ${b.builder}`).toContain(b.builder);
    }
  });

  it("names every production file of routes/ after an endpoint of lib/api/", () => {
    const names = endpoints();
    const files = readdirSync(join(REPO_ROOT, "server/observe/routes")).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
    );
    for (const f of files)
      expect(endpointOf(f, names), `routes/${f}: name it routes/<endpoint>[-part].ts`).not.toBeNull();
  });

  it("matches a route file to the longest endpoint name it starts with, and no other", () => {
    const names = ["keys", "key-actions", "dlq", "handlers"];
    expect(endpointOf("key-actions.ts", names)).toBe("key-actions");
    expect(endpointOf("keys-lookup.cluster.integration.test.ts", names)).toBe("keys");
    expect(endpointOf("dlq-redrive.ts", names)).toBe("dlq");
    expect(endpointOf("handler-self.ts", names)).toBeNull();
    expect(endpointOf("dlqx.ts", names)).toBeNull();
  });

  it("refuses a README without the table's markers", () => {
    expect(() => withRouteTable("# no table", "x")).toThrow(/markers/);
    expect(withRouteTable(`a\n${TABLE_START}\nold\n${TABLE_END}\nb`, "NEW")).toBe("a\nNEW\nb");
  });
});
