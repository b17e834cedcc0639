/**
 * The README's route table, generated: every route builder in `routes/` (an exported function whose
 * TSDoc starts "Builds `METHOD /api/…`") beside the `lib/api/<endpoint>.ts` holding its shapes —
 * the file `routes/<endpoint>.ts` or `routes/<endpoint>-<part>.ts`. `route-table.test.ts` fails when
 * README.md's table differs; regenerate with `npx tsx server/observe/route-table.ts --write`.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The markers around the generated table in server/observe/README.md. */
export const TABLE_START = "<!-- route-table:start (npx tsx server/observe/route-table.ts --write) -->";
export const TABLE_END = "<!-- route-table:end -->";

/** One route builder: the route it builds, its function, its file and the shapes' file. */
export interface RouteBuilder {
  method: string;
  path: string;
  builder: string;
  /** Repo-relative, e.g. `server/observe/routes/dlq-redrive.ts`. */
  file: string;
  /** Repo-relative `lib/api/<endpoint>.ts`, or `null` when no endpoint's name fits the file's. */
  shapes: string | null;
}

const BUILDS =
  /\/\*\*(?:(?!\*\/)[\s\S])*?Builds `([A-Z]+) (\/api\/[^`?\s]*)[^`]*`(?:(?!\*\/)[\s\S])*\*\/\s*export (?:async )?function (\w+)/g;

const tsFiles = (dir: string) =>
  readdirSync(join(REPO_ROOT, dir))
    .filter((f) => f.endsWith(".ts") && !/\.test\.ts$/.test(f))
    .sort();

/** The endpoints with shapes in `lib/api/`: `overview`, `key-actions`… */
export function endpoints(root = REPO_ROOT): string[] {
  return readdirSync(join(root, "lib/api"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** The endpoint a route file belongs to: the longest endpoint name that is its name or a `<name>-` prefix of it. */
export function endpointOf(file: string, names: readonly string[]): string | null {
  const name = basename(file).replace(/\..*$/, "");
  const fits = names.filter((n) => name === n || name.startsWith(`${n}-`));
  return fits.sort((a, b) => b.length - a.length)[0] ?? null;
}

/** Every route builder of `server/observe/routes/`, in file order then source order. */
export function routeBuilders(root = REPO_ROOT): RouteBuilder[] {
  const names = endpoints(root);
  return tsFiles("server/observe/routes").flatMap((f) => {
    const file = `server/observe/routes/${f}`;
    const endpoint = endpointOf(f, names);
    return [...readFileSync(join(root, file), "utf8").matchAll(BUILDS)].map((m) => ({
      method: m[1]!,
      path: m[2]!,
      builder: m[3]!,
      file,
      shapes: endpoint === null ? null : `lib/api/${endpoint}.ts`,
    }));
  });
}

/** The markdown table (with its markers) README.md carries. */
export function renderRouteTable(root = REPO_ROOT): string {
  const rows = routeBuilders(root).map(
    (r) =>
      `| \`${r.method} ${r.path}\` | \`${r.builder}\` | \`${r.file.replace("server/observe/", "")}\` | \`${r.shapes ?? "—"}\` |`,
  );
  const served = new Set(routeBuilders(root).map((r) => r.shapes));
  const elsewhere = endpoints(root)
    .map((e) => `lib/api/${e}.ts`)
    .filter((f) => !served.has(f))
    .map((f) => `\`${f}\``);
  return [
    TABLE_START,
    "| route | builder | file | shapes |",
    "|---|---|---|---|",
    ...rows,
    "",
    `Shapes whose routes are built outside observe (or shared by several): ${elsewhere.join(", ")}.`,
    TABLE_END,
  ].join("\n");
}

/** README.md's text with its table replaced by {@link renderRouteTable}'s. */
export function withRouteTable(readme: string, table: string): string {
  const a = readme.indexOf(TABLE_START);
  const b = readme.indexOf(TABLE_END);
  if (a < 0 || b < a)
    throw new Error(`server/observe/README.md: the markers ${TABLE_START} … ${TABLE_END} are missing`);
  return readme.slice(0, a) + table + readme.slice(b + TABLE_END.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes("--write")) {
  const path = join(REPO_ROOT, "server/observe/README.md");
  writeFileSync(path, withRouteTable(readFileSync(path, "utf8"), renderRouteTable()));
}
