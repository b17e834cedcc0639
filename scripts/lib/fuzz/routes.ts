/** The routes of app/**: each route.ts with the HTTP methods it exports, each page.tsx (GET). */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

const ROOT = join(__dirname, "../../..");

export interface Route {
  /** Path template, e.g. /api/workshop/runs/[runId] */
  template: string;
  methods: string[];
  kind: "api" | "page";
}

/** Every route.ts and page.tsx under `dir`. */
function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name === "route.ts" || name === "page.tsx") out.push(p);
  }
  return out;
}

/** Every route of app/**, with the HTTP methods its route.ts exports (pages: GET). */
export function discoverRoutes(appDir = join(ROOT, "app")): Route[] {
  return walk(appDir).map((file) => {
    const rel = relative(appDir, file).split(sep);
    const kind = rel.at(-1) === "route.ts" ? "api" : "page";
    const segs = rel.slice(0, -1).filter((s) => !/^\(.*\)$/.test(s));
    const template = `/${segs.join("/")}`;
    const methods = kind === "api" ? exportedMethods(readFileSync(file, "utf8")) : ["GET"];
    return { template, methods, kind };
  });
}

const METHOD = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/;

/**
 * The HTTP methods a route.ts exports, in each form Next.js accepts: `export (async) function GET`,
 * `export const GET = …` and a destructured `export const { GET, PUT } = …`.
 */
export function exportedMethods(src: string): string[] {
  const names = [
    ...[...src.matchAll(/export\s+(?:async\s+)?function\s+(\w+)/g)].map((m) => m[1]!),
    ...[...src.matchAll(/export\s+const\s+(\w+)\s*=/g)].map((m) => m[1]!),
    ...[...src.matchAll(/export\s+const\s*\{([^}]*)\}\s*=/g)].flatMap((m) =>
      m[1]!.split(",").map((n) =>
        n
          .trim()
          .split(/\s*:\s*/)
          .at(-1)!,
      ),
    ),
  ];
  return [...new Set(names.filter((n) => METHOD.test(n)))];
}
