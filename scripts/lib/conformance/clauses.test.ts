import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { docTables, ticks } from "@/server/testing/contract-doc";
import { CLAUSES } from "./clauses";

const DOC = readFileSync(new URL("../../../docs/CONTRACT.md", import.meta.url), "utf8");

/** The clause names of CONTRACT.md's conformance table, in its order. */
function documented(md: string): string[] {
  const t = docTables(md).find((x) => x.header[0] === "clause");
  return (t?.rows ?? []).map((r) => ticks(r[0] ?? "")[0] ?? "");
}

describe("the conformance clauses", () => {
  it("are the ones docs/CONTRACT.md lists, in its order: the kit prints the names a reader looks up there", () => {
    expect(documented(DOC)).toEqual(CLAUSES.map((c) => c.name));
  });

  it("a clause renamed in the doc alone is a disagreement", () => {
    const planted = DOC.replace("| `release-on-failure` |", "| `release-after-failure` |");
    expect(planted).not.toBe(DOC);
    expect(documented(planted)).not.toEqual(CLAUSES.map((c) => c.name));
  });
});
