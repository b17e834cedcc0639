import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * `npm ci` ends with a warning for every dependency whose install script `allowScripts` in
 * package.json does not cover (npm 11): each one is reviewed there — esbuild's postinstall only
 * checks the binary its platform package already ships, so it is denied and `npm ci` prints nothing.
 */
describe("package.json allowScripts", () => {
  it("covers every installed dependency with an install script (npm install-scripts ls)", () => {
    const out = execFileSync("npm", ["install-scripts", "ls"], {
      cwd: join(__dirname, ".."),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(out.trim()).toBe("No packages with unreviewed install scripts.");
  }, 60_000);
});
