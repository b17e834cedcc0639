import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ALERT_LIST } from "@/lib/thresholds";
import { uncoveredAlerts } from "./promtool-coverage";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const RULES_DIR = join(HERE, "rules");
const TESTS_DIR = join(RULES_DIR, "tests");
const PROMTOOL = process.env.PROMTOOL ?? "/usr/bin/promtool";

/** Runs promtool; fails (never skips) with the install hint when it is missing. */
function promtool(args: string[]): { status: number; out: string } {
  if (!existsSync(PROMTOOL)) {
    throw new Error(
      `promtool not found at ${PROMTOOL}: install it with \`apt-get install prometheus\` ` +
        "(Debian ships promtool in that package) or set PROMTOOL to its path",
    );
  }
  const r = spawnSync(PROMTOOL, args, { encoding: "utf8", timeout: 60_000 });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

// Prometheus loads `rules/*.yml` (prometheus.yml): every file there must be a valid rule file.
const ruleFiles = readdirSync(RULES_DIR)
  .filter((f) => f.endsWith(".yml") || f.endsWith(".yaml"))
  .map((f) => join(RULES_DIR, f));
const testFiles = readdirSync(TESTS_DIR)
  .filter((f) => f.endsWith(".test.yml"))
  .map((f) => join(TESTS_DIR, f));

describe("Prometheus rules (promtool 2.42)", () => {
  it("finds the rule file and its tests", () => {
    expect(ruleFiles.map((f) => f.slice(RULES_DIR.length + 1))).toEqual(["dedup.yml"]);
    expect(testFiles.length).toBeGreaterThan(0);
  });

  it("`promtool check rules` accepts every file Prometheus loads, with every alert of ALERT_LIST", () => {
    const r = promtool(["check", "rules", ...ruleFiles]);
    expect(r.out, r.out).toContain(`SUCCESS: ${ALERT_LIST.length} rules found`);
    expect(r.status, r.out).toBe(0);
  });

  it("`promtool test rules` passes: each alert pends, fires after its `for`, stays silent on the normal background", () => {
    const r = promtool(["test", "rules", ...testFiles]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain("SUCCESS");
    // ~4 s alone: the deadman rules' day-long subqueries are evaluated at every test minute.
  }, 30_000);

  it("the promtool tests cover every alert, firing and silent", () => {
    expect(
      uncoveredAlerts(
        ALERT_LIST.map((a) => a.name),
        testFiles,
      ),
    ).toEqual([]);
  });
});
