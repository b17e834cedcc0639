/**
 * The house's boundaries, read from the import graph (docs/ARCHITECTURE.md lists them):
 * - `names/` (the library's names: metrics, label values, key prefix, TTL policy) imports nothing;
 * - `server/dedup` (production files) imports only `node:*`, `prom-client`, `names/` and itself;
 * - `server/transport` imports only the library and itself; `server/notification` neither the demo
 *   nor the workshop; `server/observe` never the demo, the notification service or the workshop;
 * - `lib/` and `components/` never import `server/` (they read the library's names from `names/`);
 * - `server/` never imports `app/`, `components/`, `next/*` or React;
 * - no import circle anywhere;
 * - no production file under server/, lib/, components/ over 300 lines, no function over 80
 *   (server/testing/size-limits.ts).
 * Each checker is tested on planted input first, so a rule that cannot fail is caught here.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { measure, sizeViolations, type Measured } from "./testing/size-limits";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIRS = ["names", "server", "lib", "components", "app", "scripts", "e2e", "test", "infra"];
const EXT = [".ts", ".tsx"];

/** An import graph: file (repo-relative) → the specifiers it imports. */
type Graph = Map<string, string[]>;

const isTest = (f: string) =>
  /\.(test|suite|e2e\.test)\.tsx?$/.test(f) ||
  /(^|\/)testing\//.test(f) ||
  f.startsWith("e2e/") ||
  f.startsWith("test/");

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) walk(rel, out);
    else if (EXT.some((e) => name.endsWith(e)) && !name.endsWith(".d.ts")) out.push(rel);
  }
}

const IMPORT_RE =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|(?:^|\n)\s*import\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function readGraph(): Graph {
  const files: string[] = [];
  for (const d of DIRS) {
    try {
      walk(d, files);
    } catch {
      /* a folder the tree does not have */
    }
  }
  for (const f of ["proxy.ts", "instrumentation.ts"]) files.push(f);
  const g: Graph = new Map();
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(join(ROOT, f), "utf8");
    } catch {
      continue;
    }
    const specs: string[] = [];
    for (const m of text.matchAll(IMPORT_RE)) specs.push((m[1] ?? m[2] ?? m[3])!);
    g.set(f, specs);
  }
  return g;
}

/** The repo file a specifier names, or null for a package / node built-in. */
function resolveSpec(from: string, spec: string, files: ReadonlySet<string>): string | null {
  let base: string;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = relative(ROOT, resolve(ROOT, dirname(from), spec));
  else return null;
  for (const cand of [base, ...EXT.map((e) => base + e), ...EXT.map((e) => join(base, "index" + e))])
    if (files.has(cand)) return cand;
  return base; // unresolved: still judged by its path
}

interface Rule {
  name: string;
  /** Files the rule applies to. */
  from: (f: string) => boolean;
  /** True when importing `spec` (resolved to `target`, null for a package) breaks the rule. */
  forbids: (target: string | null, spec: string) => boolean;
}

const under = (p: string) => (f: string | null) => f !== null && (f === p || f.startsWith(p + "/"));

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

/** Every broken rule in `g`, as "file → specifier: rule". */
export function violations(g: Graph, rules: readonly Rule[] = RULES): string[] {
  const files = new Set(g.keys());
  const out: string[] = [];
  for (const [f, specs] of g) {
    for (const spec of specs) {
      const t = resolveSpec(f, spec, files);
      for (const r of rules) if (r.from(f) && r.forbids(t, spec)) out.push(`${f} → ${spec}: ${r.name}`);
    }
  }
  return out;
}

/** Import circles among repo files (each as a path a → b → … → a), found by DFS. */
export function circles(g: Graph): string[] {
  const files = new Set(g.keys());
  const edges = new Map<string, string[]>();
  for (const [f, specs] of g)
    edges.set(
      f,
      specs.map((s) => resolveSpec(f, s, files)).filter((t): t is string => t !== null && files.has(t)),
    );
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const found: string[] = [];
  const visit = (f: string) => {
    state.set(f, 1);
    stack.push(f);
    for (const t of edges.get(f) ?? []) {
      if (state.get(t) === 1) found.push([...stack.slice(stack.indexOf(t)), t].join(" → "));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return found;
}

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
    const v = violations(planted);
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
    expect(g.get("server/dedup/router.ts")?.length).toBeGreaterThan(0);
  });
  it("breaks no rule", () => {
    expect(violations(g)).toEqual([]);
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

describe("production code keeps to the size limits", () => {
  it("no file over 300 lines and no function over 80 under server/, lib/, components/", () => {
    const files: string[] = [];
    for (const d of ["server", "lib", "components"]) walk(d, files);
    const measured = files.filter((f) => !isTest(f)).flatMap((f) => measure(f, readFileSync(join(ROOT, f), "utf8")));
    expect(measured.length).toBeGreaterThan(150);
    expect(sizeViolations(measured)).toEqual([]);
  }, 120_000); // parses ~300 files: seconds on an idle machine, more under load
});
