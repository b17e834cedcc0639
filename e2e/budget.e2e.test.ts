/**
 * First Load JS per page route, from the `next build` output (Next 16 no longer prints it): the
 * gzip size of the scripts a first visit loads — the `<script src>` of a prerendered page's HTML,
 * or, for a dynamic route, the route's entry chunks of its client-reference manifest plus the root
 * main files — without the `nomodule` polyfills modern browsers skip. Budget of issue 6: the
 * overview ≤ 250 KB gzip. Writes test-results/ui-first-load.json (docs/UI.md quotes it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ROOT } from "./harness";

const NEXT = join(ROOT, ".next");
const OVERVIEW_BUDGET_BYTES = 250_000;

/** Static routes and their prerendered HTML under .next/server/app. */
const STATIC_ROUTES: Record<string, string> = { "/": "index.html", "/alerts": "alerts.html", "/keys": "keys.html", "/workshop": "workshop.html" };
/** Dynamic routes and their client-reference manifest. */
const DYNAMIC_ROUTES: Record<string, string> = { "/handlers/[service]/[handler]": "handlers/[service]/[handler]/page_client-reference-manifest.js" };

interface BuildManifest {
  rootMainFiles: string[];
  polyfillFiles: string[];
}

function chunkBytes(file: string): number {
  return gzipSync(readFileSync(join(NEXT, file.replace(/^\/_next\//, "")))).length;
}

/** Chunks (paths relative to .next) a first visit of `route` loads. */
export function firstLoadChunks(route: string, manifest: BuildManifest): string[] {
  const strip = (f: string) => f.replace(/^\/_next\//, "");
  const polyfill = new Set(manifest.polyfillFiles.map(strip));
  const html = STATIC_ROUTES[route];
  if (html) {
    const text = readFileSync(join(NEXT, "server", "app", html), "utf8");
    const srcs = [...text.matchAll(/<script[^>]+src="([^"]+\.js)"[^>]*>/g)].filter((m) => !/nomodule/i.test(m[0])).map((m) => strip(m[1]!));
    return [...new Set(srcs)].filter((f) => !polyfill.has(f));
  }
  const man = DYNAMIC_ROUTES[route];
  if (!man) throw new Error(`unknown route ${route}`);
  const ctx: { globalThis?: unknown; __RSC_MANIFEST?: Record<string, { entryJSFiles: Record<string, string[]> }> } = {};
  ctx.globalThis = ctx;
  runInNewContext(readFileSync(join(NEXT, "server", "app", man), "utf8"), ctx);
  const entry = Object.values(ctx.__RSC_MANIFEST ?? {})[0];
  if (!entry) throw new Error(`no manifest entry in ${man}`);
  const pageKey = Object.keys(entry.entryJSFiles).find((k) => k.endsWith(`/app${route}/page`));
  const files = new Set<string>(manifest.rootMainFiles.map(strip));
  for (const k of ["[project]/app/layout", pageKey ?? ""]) for (const f of entry.entryJSFiles[k] ?? []) files.add(strip(f));
  return [...files].filter((f) => !polyfill.has(f));
}

describe("budget: First Load JS per route (from the next build output)", () => {
  it("every page route's first-load JS, and the overview within 250 KB gzip", () => {
    if (!existsSync(join(NEXT, "BUILD_ID"))) throw new Error("no .next build: run `npx next build` first (npm test does)");
    const manifest = JSON.parse(readFileSync(join(NEXT, "build-manifest.json"), "utf8")) as BuildManifest;
    const out: Record<string, { gzipBytes: number; gzipKiB: number; chunks: number }> = {};
    for (const route of [...Object.keys(STATIC_ROUTES), ...Object.keys(DYNAMIC_ROUTES)]) {
      const files = firstLoadChunks(route, manifest);
      expect(files.length).toBeGreaterThan(0);
      const bytes = files.reduce((a, f) => a + chunkBytes(f), 0);
      out[route] = { gzipBytes: bytes, gzipKiB: Math.round((bytes / 1024) * 10) / 10, chunks: files.length };
      console.log(`[first-load-js] ${route.padEnd(30)} ${(bytes / 1024).toFixed(1).padStart(6)} KiB gzip in ${files.length} chunks`);
    }
    // The charts (recharts and its d3/redux/decimal dependencies) are a separate chunk, requested
    // at hydration in parallel with the data: report it beside the first-load figures.
    const chunksDir = join(NEXT, "static", "chunks");
    const chart = readdirSync(chunksDir)
      .filter((f) => f.endsWith(".js") && /recharts-(reference-line|wrapper|surface)/.test(readFileSync(join(chunksDir, f), "utf8")))
      .map((f) => `static/chunks/${f}`);
    expect(chart.length).toBeGreaterThan(0);
    for (const route of Object.keys(out)) expect(firstLoadChunks(route, manifest).some((f) => chart.includes(f))).toBe(false);
    const chartBytes = chart.reduce((a, f) => a + chunkBytes(f), 0);
    console.log(`[first-load-js] chart chunk (async, after hydration) ${(chartBytes / 1024).toFixed(1)} KiB gzip in ${chart.length} chunk(s)`);
    out["(async) charts"] = { gzipBytes: chartBytes, gzipKiB: Math.round((chartBytes / 1024) * 10) / 10, chunks: chart.length };
    mkdirSync(join(ROOT, "test-results"), { recursive: true });
    writeFileSync(join(ROOT, "test-results", "ui-first-load.json"), JSON.stringify(out, null, 2));
    expect(out["/"]!.gzipBytes).toBeLessThanOrEqual(OVERVIEW_BUDGET_BYTES);
    // Sanity: a page that draws no chart is no heavier than the overview shell.
    expect(out["/alerts"]!.gzipBytes).toBeLessThanOrEqual(out["/"]!.gzipBytes);
  });
});
