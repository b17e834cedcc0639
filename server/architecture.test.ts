/**
 * The house's boundaries, read from the import graph (docs/ARCHITECTURE.md lists them):
 * - `names/` (the library's names: metrics, label values, key prefix, TTL policy) imports nothing;
 * - `server/dedup` (production files) imports only `node:*`, `prom-client`, `names/` and itself;
 * - `server/transport` imports only the library and itself; `server/notification` neither the demo
 *   nor the workshop; `server/observe` never the demo, the notification service or the workshop;
 * - `lib/` and `components/` never import `server/` (they read the library's names from `names/`);
 * - `server/` never imports `app/`, `components/`, `next/*` or React;
 * - no import circle anywhere;
 * - `server/dedup` and `server/observe` read as stacks (STACKS): rooms in levels, bottom first, and no
 *   production file imports a room above its own (an arrow running back up);
 * - no production file anywhere (server/, lib/, components/, app/, names/, scripts/, infra/) over 300
 *   lines, no function over 80 (server/testing/size-limits.ts).
 * The graph and the checkers are in server/testing/import-graph.ts.
 * Each checker is tested on planted input first, so a rule that cannot fail is caught here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  arrowsUp,
  circles,
  type FolderStack,
  type Graph,
  isTest,
  readGraph,
  readStack,
  ROOT,
  type Rule,
  under,
  violations,
  walk,
} from "./testing/import-graph";
import { measure, sizeViolations, type Measured } from "./testing/size-limits";

export const RULES: Rule[] = [
  {
    name: "names/ imports nothing",
    from: (f) => under("names")(f) && !isTest(f),
    forbids: () => true,
  },
  {
    name: "server/dedup imports only node:*, prom-client, names/ and itself",
    from: (f) => under("server/dedup")(f) && !isTest(f),
    forbids: (t, spec) =>
      t === null
        ? !(spec.startsWith("node:") || spec === "prom-client")
        : !(under("server/dedup")(t) || under("names")(t)),
  },
  {
    name: "server/transport imports only the library and itself",
    from: (f) => under("server/transport")(f) && !isTest(f),
    forbids: (t, spec) =>
      (t === null ? false : !(under("server/transport")(t) || under("server/dedup")(t) || under("names")(t))) &&
      !spec.startsWith("node:"),
  },
  {
    name: "server/notification never imports the demo or the workshop",
    from: (f) => under("server/notification")(f) && !isTest(f),
    forbids: (t) => under("server/demo")(t) || under("server/workshop")(t),
  },
  {
    name: "server/observe never imports demo, notification or workshop",
    from: (f) => under("server/observe")(f) && !isTest(f),
    forbids: (t) =>
      under("server/demo")(t) ||
      under("server/notification")(t) ||
      under("server/workshop")(t) ||
      under("server/consumer")(t),
  },
  {
    name: "lib/ and components/ never import server/",
    from: (f) => under("lib")(f) || under("components")(f),
    forbids: (t) => under("server")(t),
  },
  {
    name: "server/ never imports app/, components/, next/* or react",
    from: (f) => under("server")(f),
    forbids: (t, spec) =>
      under("app")(t) ||
      under("components")(t) ||
      (t === null &&
        (spec === "next" ||
          spec.startsWith("next/") ||
          spec === "react" ||
          spec.startsWith("react-") ||
          spec.startsWith("react/"))),
  },
  {
    name: "the old server/consumer folder is gone",
    from: () => true,
    forbids: (t) => under("server/consumer")(t),
  },
];

/**
 * The folders read as stacks: rooms in levels, bottom first (docs/ARCHITECTURE.md draws them). A
 * production file imports its own room, its level or below; a new room must be placed here.
 */
export const STACKS: FolderStack[] = [
  {
    root: "server/dedup",
    levels: [
      ["message"],
      ["errors"],
      ["repository"],
      ["metrics"],
      ["pubsub"],
      ["router"],
      ["middleware"],
      ["deduplicator"],
      ["lint"],
      ["stack"],
      ["index"],
    ],
  },
  {
    root: "server/observe",
    levels: [
      ["core", "keys/source", "metrics/source"],
      ["redis", "kafka", "alertmanager", "metrics", "keys", "records"],
      ["shared"],
      ["watchers"],
      ["routes"],
      ["context", "index", "route-table"],
    ],
  },
];

describe("the checker itself (a planted wrong import must fail)", () => {
  const planted: Graph = new Map([
    ["server/dedup/router.ts", ["./message", "node:crypto", "prom-client", "ioredis"]],
    ["server/dedup/message.ts", []],
    ["server/observe/overview.ts", ["@/server/demo/traffic"]],
    ["server/demo/traffic.ts", []],
    ["lib/thresholds.ts", ["@/server/dedup/policy", "@/names/dedup"]],
    ["lib/bridge.test.ts", ["@/server/dedup/message"]],
    ["names/dedup.ts", []],
    ["names/extra.ts", ["./dedup"]],
    ["server/dedup/stack.ts", ["../../names/dedup"]],
    ["components/x.tsx", ["@/server/observe/overview", "react"]],
    ["server/observe/a.ts", ["./b"]],
    ["server/observe/b.ts", ["./a"]],
  ]);
  it("names each planted violation and nothing else", () => {
    const v = violations(planted, RULES);
    expect(v).toEqual([
      "server/dedup/router.ts → ioredis: server/dedup imports only node:*, prom-client, names/ and itself",
      "server/observe/overview.ts → @/server/demo/traffic: server/observe never imports demo, notification or workshop",
      "lib/thresholds.ts → @/server/dedup/policy: lib/ and components/ never import server/",
      "lib/bridge.test.ts → @/server/dedup/message: lib/ and components/ never import server/",
      "names/extra.ts → ./dedup: names/ imports nothing",
      "components/x.tsx → @/server/observe/overview: lib/ and components/ never import server/",
    ]);
  });
  it("finds a planted circle", () => {
    expect(circles(planted)).toEqual(["server/observe/a.ts → server/observe/b.ts → server/observe/a.ts"]);
  });
});

describe("the tree keeps its boundaries", () => {
  const g = readGraph();
  it("reads the whole tree", () => {
    expect(g.size).toBeGreaterThan(200);
    expect(g.get("server/dedup/index.ts")?.length).toBeGreaterThan(0);
  });
  it("breaks no rule", () => {
    expect(violations(g, RULES)).toEqual([]);
  });
  it("has no import circle", () => {
    expect(circles(g)).toEqual([]);
  });
});

describe("the size checker itself (a planted long file and function must fail)", () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");
  const longFn = `export function long(): void {\n${body(79)}\n}\n`;
  const shortFn = `export const short = () => {\n${body(78)}\n};\n`;
  it("names a function over 80 lines and a file over 300, and passes what keeps to the limits", () => {
    const planted: Measured[] = [
      ...measure("server/x.ts", longFn + shortFn),
      ...measure("lib/big.ts", "// x\n".repeat(301)),
      ...measure("lib/ok.ts", "// x\n".repeat(300)),
    ];
    expect(sizeViolations(planted)).toEqual([
      "server/x.ts long(): 81 lines (limit 80)",
      "lib/big.ts: 301 lines (limit 300)",
    ]);
  });
});

describe("the folder stacks' checker itself (an arrow back up must fail)", () => {
  const stack: FolderStack = { root: "server/dedup", levels: [["message"], ["router"], ["deduplicator"]] };
  const planted: Graph = new Map([
    ["server/dedup/message.ts", []],
    ["server/dedup/router/router.ts", ["../message", "../deduplicator/batch-state", "./options"]],
    ["server/dedup/router/options.ts", []],
    ["server/dedup/deduplicator/batch-state.ts", ["../router/router", "../message"]],
    ["server/dedup/deduplicator/deduplicator.test.ts", ["../lint"]],
    ["server/dedup/lint.ts", ["./message"]],
  ]);
  it("names a file of deduplicator/ imported from router/, and a room not placed", () => {
    expect(arrowsUp(planted, stack)).toEqual([
      "server/dedup/lint: a room not placed in server/dedup's stack",
      "server/dedup/router/router.ts → ../deduplicator/batch-state: router imports deduplicator, a room above it",
    ]);
  });
  it("reads its rooms, arrows back up and circles", () => {
    expect(readStack(planted, stack)).toEqual({
      rooms: ["deduplicator", "lint", "message", "router"],
      arrowsUp: 2,
      circles: 1,
    });
  });
});

describe("the folders read as stacks", () => {
  const g = readGraph();
  for (const stack of STACKS) {
    it(`${stack.root}: no arrow runs back up, no circle, every room placed`, () => {
      expect(arrowsUp(g, stack)).toEqual([]);
      expect(readStack(g, stack).circles).toBe(0);
    });
  }
  it("server/dedup reads as about 16 rooms", () => {
    const { rooms } = readStack(g, STACKS[0]!);
    expect(rooms.length, rooms.join(", ")).toBeLessThanOrEqual(18);
  });
});

/** Where production code lives: every folder of the tree but the tests, plus the root's two files. */
const PRODUCTION_DIRS = ["server", "lib", "components", "app", "names", "scripts", "infra"];

describe("production code keeps to the size limits", () => {
  it("no file over 300 lines and no function over 80 anywhere (names/, scripts/ and infra/ included)", () => {
    const files: string[] = ["proxy.ts", "instrumentation.ts"];
    for (const d of PRODUCTION_DIRS) walk(d, files);
    const measured = files.filter((f) => !isTest(f)).flatMap((f) => measure(f, readFileSync(join(ROOT, f), "utf8")));
    expect(measured.length).toBeGreaterThan(300);
    expect(sizeViolations(measured)).toEqual([]);
  }, 120_000); // parses ~500 files: seconds on an idle machine, more under load
});
