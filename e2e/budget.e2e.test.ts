/**
 * First Load JS per page route (Next 16's `next build` no longer prints it): the gzip size of the
 * scripts a first visit loads — the `<script src>` of the HTML the built app (`next start`) serves
 * for the route — without the `nomodule` polyfills modern browsers skip. Every page is rendered per
 * request (the layout reads the CSP nonce of proxy.ts), so there is no prerendered HTML to read: the
 * HTML is the one a browser gets. Budget: the overview ≤ 250 KB gzip. Writes
 * test-results/ui-first-load.json (docs/UI.md quotes it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startApp, type App } from "./harness";

const NEXT = join(ROOT, ".next");
const OVERVIEW_BUDGET_BYTES = 250_000;

/**
 * Page routes and the URL fetched for each. The handler page's scripts do not depend on its
 * segments (one page module for every service/handler), so any pair stands for the route.
 */
const PAGE_ROUTES: Record<string, string> = {
  "/": "/",
  "/alerts": "/alerts",
  "/keys": "/keys",
  "/workshop": "/workshop",
  "/handlers/[service]/[handler]": "/handlers/budget/first-load",
};

interface BuildManifest {
  polyfillFiles: string[];
}

/** A chunk's path relative to .next (`/_next/static/…` → `static/…`). */
const strip = (f: string) => f.replace(/^\/_next\//, "");

function chunkBytes(file: string): number {
  return gzipSync(readFileSync(join(NEXT, file))).length;
}

/** Chunks (paths relative to .next) the `<script src>` tags of `html` load, without polyfills. */
export function firstLoadChunks(html: string, manifest: BuildManifest): string[] {
  const polyfill = new Set(manifest.polyfillFiles.map(strip));
  const srcs = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+\.js)(?:\?[^"]*)?"[^>]*>/g)]
    .filter((m) => !/nomodule/i.test(m[0]))
    .map((m) => strip(m[1]!));
  return [...new Set(srcs)].filter((f) => !polyfill.has(f));
}

describe("budget: First Load JS per route (scripts of the HTML the built app serves)", () => {
  let app: App;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("every page route's first-load JS, and the overview within 250 KB gzip", async () => {
    const manifest = JSON.parse(readFileSync(join(NEXT, "build-manifest.json"), "utf8")) as BuildManifest;
    const out: Record<string, { gzipBytes: number; gzipKiB: number; chunks: number }> = {};
    const files: Record<string, string[]> = {};
    for (const [route, path] of Object.entries(PAGE_ROUTES)) {
      const res = await fetch(`${app.url}${path}?refresh=off`);
      expect(res.status, `${route} answered ${res.status}`).toBe(200);
      const list = firstLoadChunks(await res.text(), manifest);
      files[route] = list;
      expect(list.length, `${route}: no <script src> in its HTML`).toBeGreaterThan(0);
      for (const f of list) expect(existsSync(join(NEXT, f)), `${route} loads ${f}, not in the build`).toBe(true);
      const bytes = list.reduce((a, f) => a + chunkBytes(f), 0);
      out[route] = { gzipBytes: bytes, gzipKiB: Math.round((bytes / 1024) * 10) / 10, chunks: list.length };
      console.log(
        `[first-load-js] ${route.padEnd(30)} ${(bytes / 1024).toFixed(1).padStart(6)} KiB gzip in ${list.length} chunks`,
      );
    }
    // The charts (recharts and its d3/redux/decimal dependencies) are a separate chunk, requested
    // at hydration in parallel with the data: report it beside the first-load figures.
    const chunksDir = join(NEXT, "static", "chunks");
    const chart = readdirSync(chunksDir)
      .filter(
        (f) =>
          f.endsWith(".js") &&
          /recharts-(reference-line|wrapper|surface)/.test(readFileSync(join(chunksDir, f), "utf8")),
      )
      .map((f) => `static/chunks/${f}`);
    expect(chart.length).toBeGreaterThan(0);
    for (const route of Object.keys(files))
      expect(
        files[route]!.some((f) => chart.includes(f)),
        `${route} loads the chart chunk up front`,
      ).toBe(false);
    const chartBytes = chart.reduce((a, f) => a + chunkBytes(f), 0);
    console.log(
      `[first-load-js] chart chunk (async, after hydration) ${(chartBytes / 1024).toFixed(1)} KiB gzip in ${chart.length} chunk(s)`,
    );
    out["(async) charts"] = {
      gzipBytes: chartBytes,
      gzipKiB: Math.round((chartBytes / 1024) * 10) / 10,
      chunks: chart.length,
    };
    mkdirSync(join(ROOT, "test-results"), { recursive: true });
    writeFileSync(join(ROOT, "test-results", "ui-first-load.json"), JSON.stringify(out, null, 2));
    expect(out["/"]!.gzipBytes).toBeLessThanOrEqual(OVERVIEW_BUDGET_BYTES);
    // Sanity: a page that draws no chart is no heavier than the overview shell.
    expect(out["/alerts"]!.gzipBytes).toBeLessThanOrEqual(out["/"]!.gzipBytes);
  });
});
