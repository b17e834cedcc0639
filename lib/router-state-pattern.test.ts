/**
 * The router-state pattern next.config.js refuses headers by, against Next's own parser
 * (`parseAndValidateFlightRouterState`, which answers a plain 500 when it throws): every state Next's
 * client sends matches, and nothing matches that Next would fail to parse.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAndValidateFlightRouterState } from "next/dist/server/app-render/parse-and-validate-flight-router-state";
import { describe, expect, it } from "vitest";
import { NOT_ROUTER_STATE_PATTERN, ROUTER_STATE_MAX_DEPTH, ROUTER_STATE_PATTERN } from "./router-state-pattern";

// As Next's `has` matching compiles a rewrite's value (once here; per request in Next).
const ACCEPT = new RegExp(`^${ROUTER_STATE_PATTERN}$`);
const REFUSE = new RegExp(`^${NOT_ROUTER_STATE_PATTERN}$`);
const accepted = (h: string) => ACCEPT.test(h);
const refused = (h: string) => REFUSE.test(h);
const nextParses = (h: string) => {
  try {
    parseAndValidateFlightRouterState(h);
    return true;
  } catch {
    return false;
  }
};
const encode = (v: unknown) => encodeURIComponent(JSON.stringify(v));

/** A small seeded generator (mulberry32): the same cases on every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  "__PAGE__",
  "children",
  "handlers",
  "é",
  "😀",
  '"',
  "\\",
  "\n",
  "?",
  '{"range":"1h"}',
  "%",
  " ",
  "(..)",
];
function randomTree(r: () => number, depth: number): unknown[] {
  const str = () => Array.from({ length: Math.floor(r() * 4) }, () => PIECES[Math.floor(r() * PIECES.length)]).join("");
  const segment =
    r() < 0.7
      ? str()
      : [str(), str(), ["c", "d", "oc", "ci(..)(..)", "di(...)"][Math.floor(r() * 5)], r() < 0.5 ? null : [str()]];
  const children: Record<string, unknown> = {};
  if (depth > 1) for (let i = Math.floor(r() * 3); i > 0; i--) children[str() || "children"] = randomTree(r, depth - 1);
  const tail = [
    r() < 0.5 ? null : [str(), str()],
    r() < 0.5 ? null : "refetch",
    r() < 0.5 ? null : Math.floor(r() * 9),
    str(),
  ];
  return [segment, children, ...tail.slice(0, Math.floor(r() * 5))];
}

describe("the router-state pattern agrees with Next's parser", () => {
  it("matches every router state tree Next's client sends, up to its depth", () => {
    const r = rng(1);
    for (let i = 0; i < 300; i++) {
      const h = encode(randomTree(r, 1 + Math.floor(r() * ROUTER_STATE_MAX_DEPTH)));
      expect(nextParses(h), h).toBe(true);
      expect(accepted(h), h).toBe(true);
      expect(refused(h), h).toBe(false);
    }
  });

  it("refuses wrong shapes, bad encodings and broken JSON that make Next's renderer throw", () => {
    const wrong = [
      encode([1, 2]),
      encode([{}]),
      encode(["", { children: 5 }]),
      encode(["", {}, null, "bogus"]),
      encode(["", {}, null, null, 1, "x", 1]),
      encode([["p", "v", "zz", null], {}]),
      encode([]),
      "%5B%22%22%2C%7B%22a%22%3A%5B%22%22%2C%7B%7D%5D%2C%7D%5D", // a trailing comma
      "%5B%22%FF%22%2C%7B%7D%5D", // not UTF-8: decodeURIComponent throws
      "%5B%22%0A%22%2C%7B%7D%5D", // a raw newline inside a JSON string
      "%5B%22%5Cq%22%2C%7B%7D%5D", // an escape JSON does not know
      "garbage",
    ];
    for (const h of wrong) {
      expect(nextParses(h), h).toBe(false);
      expect(refused(h), h).toBe(true);
    }
  });

  it("never accepts a header Next cannot parse: 3,000 random edits of valid headers", () => {
    const r = rng(2);
    const alphabet = [
      "%5B",
      "%5D",
      "%7B",
      "%7D",
      "%22",
      "%2C",
      "%3A",
      "%5C",
      "%",
      "%E2",
      "%80",
      "null",
      "1",
      "a",
      "]",
      '"',
    ];
    let acceptedEdits = 0;
    for (let i = 0; i < 3_000; i++) {
      const h = encode(randomTree(r, 1 + Math.floor(r() * 4)));
      const at = Math.floor(r() * h.length);
      const cut = Math.floor(r() * 4);
      const edited =
        h.slice(0, at) + (r() < 0.7 ? alphabet[Math.floor(r() * alphabet.length)] : "") + h.slice(at + cut);
      if (accepted(edited)) {
        acceptedEdits++;
        expect(nextParses(edited), edited).toBe(true);
      }
    }
    // The edits reach both sides of the line: some stay valid, most do not.
    expect(acceptedEdits).toBeGreaterThan(30);
  });

  it("stays linear on a refused 32 kB header (under 50 ms to compile and match)", () => {
    const wide = encode([
      "",
      Object.fromEntries(Array.from({ length: 700 }, (_, i) => [`k${i}`, ["x".repeat(10), {}]])),
    ]);
    for (const h of [`${wide}x`, wide.replace("%22k350%22", "%22k350%22%3A5"), "%5B".repeat(13_000)]) {
      const t0 = performance.now();
      expect(new RegExp(`^${NOT_ROUTER_STATE_PATTERN}$`).test(h)).toBe(true);
      expect(performance.now() - t0).toBeLessThan(50);
    }
  });

  it("is deeper than this app's deepest page (a deeper route would be refused its client navigations)", () => {
    const app = join(__dirname, "..", "app");
    const depth = (dir: string): number =>
      Math.max(
        readdirSync(dir).includes("page.tsx") ? 0 : -Infinity,
        ...readdirSync(dir)
          .filter((n) => n !== "api" && statSync(join(dir, n)).isDirectory())
          .map((n) => 1 + depth(join(dir, n))),
      );
    // The root segment, one per folder, then the page's own segment.
    expect(2 + depth(app)).toBeLessThan(ROUTER_STATE_MAX_DEPTH);
  });
});
