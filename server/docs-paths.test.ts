/**
 * The docs send a reader to files by path (`server/observe/routes/overview.ts`): each such path must
 * exist, or a reader following it after a move lands nowhere. Reads every Markdown file of docs/,
 * the README, the RUNBOOK and the folder READMEs.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./testing/import-graph";

/** A backticked repo path: a top folder of the tree, then the rest (an optional `:line` after it). */
const PATH_RE =
  /`((?:server|lib|components|app|scripts|names|infra|e2e|test|docs|examples)\/[A-Za-z0-9_./[\]-]+?)(?::\d+)?`/g;
/** Paths named on purpose though absent: the folder that must stay gone, a secret the operator writes. */
const ABSENT_ON_PURPOSE = new Set(["server/consumer", "infra/alertmanager/receiver-token"]);

/** Every path `text` names that does not exist (a module path may omit `.ts`/`.tsx`). */
export function missingPaths(text: string, exists: (p: string) => boolean): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PATH_RE)) {
    const p = m[1]!.replace(/[/.]+$/, "");
    if (p.includes("<") || ABSENT_ON_PURPOSE.has(p)) continue;
    if (![p, `${p}.ts`, `${p}.tsx`].some(exists)) out.push(p);
  }
  return out;
}

const DOCS = [
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
  "README.md",
  "RUNBOOK.md",
  "server/observe/README.md",
];

describe("the docs name files that exist", () => {
  it("the checker names a moved file and passes one that is there", () => {
    const there = (p: string) => p === "server/dedup/index.ts";
    expect(missingPaths("see `server/dedup/index.ts` and `server/dedup/router.ts:12`", there)).toEqual([
      "server/dedup/router.ts",
    ]);
  });
  for (const doc of DOCS) {
    it(`${doc}: every path it names exists`, () => {
      const text = readFileSync(join(ROOT, doc), "utf8");
      expect(missingPaths(text, (p) => existsSync(join(ROOT, p)))).toEqual([]);
    });
  }
});
