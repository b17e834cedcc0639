/**
 * The house's import graph as the architecture test reads it (docs/ARCHITECTURE.md): every `.ts`/`.tsx`
 * file of the tree and the specifiers it imports, the rules an import may break, the circles, and the
 * folders read as stacks (rooms bottom to top, where an import from a room to a higher one is an arrow
 * running back up).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const DIRS = ["names", "server", "lib", "components", "app", "scripts", "e2e", "test", "infra"];
const EXT = [".ts", ".tsx"];

/** An import graph: file (repo-relative) → the specifiers it imports. */
export type Graph = Map<string, string[]>;

/** Tests and test support: outside the production rules and the size limits. */
export const isTest = (f: string) =>
  /\.(test|suite|e2e\.test)\.tsx?$/.test(f) ||
  /(^|\/)testing\//.test(f) ||
  f.startsWith("e2e/") ||
  f.startsWith("test/");

/** Every `.ts`/`.tsx` file (no `.d.ts`) under `dir`, appended to `out`. */
export function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) walk(rel, out);
    else if (EXT.some((e) => name.endsWith(e)) && !name.endsWith(".d.ts")) out.push(rel);
  }
}

const IMPORT_RE =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|(?:^|\n)\s*import\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** The whole tree's graph, read from disk. */
export function readGraph(): Graph {
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
export function resolveSpec(from: string, spec: string, files: ReadonlySet<string>): string | null {
  let base: string;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = relative(ROOT, resolve(ROOT, dirname(from), spec));
  else return null;
  for (const cand of [base, ...EXT.map((e) => base + e), ...EXT.map((e) => join(base, "index" + e))])
    if (files.has(cand)) return cand;
  return base; // unresolved: still judged by its path
}

/** One boundary: which files it applies to, and which imports break it. */
export interface Rule {
  name: string;
  /** Files the rule applies to. */
  from: (f: string) => boolean;
  /** True when importing `spec` (resolved to `target`, null for a package) breaks the rule. */
  forbids: (target: string | null, spec: string) => boolean;
}

/** True for `p` itself and everything under the folder `p`. */
export const under = (p: string) => (f: string | null) => f !== null && (f === p || f.startsWith(p + "/"));

/** Every broken rule in `g`, as "file → specifier: rule". */
export function violations(g: Graph, rules: readonly Rule[]): string[] {
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

/**
 * A folder read as a stack: its rooms in levels, bottom first. A room is a top-level file (without its
 * extension) or folder — or, where one file of a folder sits lower than the rest (a port the folder's
 * own files implement), that file's path (`keys/source`). A production file may import its own room, a
 * room of its level or one below; importing a room above is an arrow running back up. Every room must
 * be placed.
 */
export interface FolderStack {
  root: string;
  levels: ReadonlyArray<readonly string[]>;
}

/** The room of `f` under `root`: the longest placed room path it is or lies under, else its first segment. */
export function roomOf(root: string, f: string, placed: readonly string[] = []): string | null {
  if (!f.startsWith(root + "/")) return null;
  const rel = f.slice(root.length + 1);
  const bare = rel.replace(/\.tsx?$/, "");
  const hit = placed
    .filter((r) => r.includes("/") && (bare === r || rel.startsWith(r + "/")))
    .sort((a, b) => b.length - a.length)[0];
  if (hit) return hit;
  const first = rel.split("/")[0]!;
  return rel.includes("/") ? first : bare;
}

/** Every arrow running back up in `stack` (and every room not placed in it), one line each. */
export function arrowsUp(g: Graph, stack: FolderStack): string[] {
  const files = new Set(g.keys());
  const level = new Map<string, number>();
  stack.levels.forEach((rooms, i) => rooms.forEach((r) => level.set(r, i)));
  const placed = [...level.keys()];
  const out: string[] = [];
  const unplaced = new Set<string>();
  for (const [f, specs] of g) {
    const from = roomOf(stack.root, f, placed);
    if (from === null || isTest(f)) continue;
    if (!level.has(from)) {
      unplaced.add(`${stack.root}/${from}: a room not placed in ${stack.root}'s stack`);
      continue;
    }
    for (const spec of specs) {
      const t = resolveSpec(f, spec, files);
      const to = t === null ? null : roomOf(stack.root, t, placed);
      if (to === null || to === from || !level.has(to)) continue;
      if (level.get(to)! > level.get(from)!) out.push(`${f} → ${spec}: ${from} imports ${to}, a room above it`);
    }
  }
  return [...unplaced, ...out];
}

/** How a stack reads: its rooms holding production code, arrows back up, and circles inside it. */
export function readStack(g: Graph, stack: FolderStack): { rooms: string[]; arrowsUp: number; circles: number } {
  const inside: Graph = new Map([...g].filter(([f]) => f.startsWith(stack.root + "/")));
  const rooms = new Set<string>();
  const placed = stack.levels.flat();
  for (const f of inside.keys()) if (!isTest(f)) rooms.add(roomOf(stack.root, f, placed)!);
  return { rooms: [...rooms].sort(), arrowsUp: arrowsUp(g, stack).length, circles: circles(inside).length };
}
