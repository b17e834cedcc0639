import { createHash } from "node:crypto";
import type { Command, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { DESCRIBE_SAMPLES_LUA } from "./samples";
import { AGGREGATE_LUA, evalScript } from "./scripts";

const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");

describe("the key inspection's Lua scripts", () => {
  // They run by SHA1 (EVALSHA, loaded on NOSCRIPT) on servers other app versions use too: a change of
  // their text is a deliberate change of these pins.
  it("the aggregate script is the pinned text: its SHA1 is the one every server caches it under", () => {
    expect(sha1(AGGREGATE_LUA)).toBe("d125aed4a947c73d10be80bb5f71e5f9ce681577");
  });
  it("the sample reads' script is the pinned text", () => {
    expect(sha1(DESCRIBE_SAMPLES_LUA)).toBe("ae84dbb911fe880dc0c3c6e2c990a84b34ba2d97");
  });
});

describe("evalScript", () => {
  /** A node that has not cached any script yet: EVALSHA answers NOSCRIPT, EVAL runs the text. */
  function freshNode() {
    const sent: Array<{ name: string; args: unknown[] }> = [];
    const node = {
      sendCommand(c: Command) {
        sent.push({ name: c.name, args: c.args });
        return c.name === "evalsha"
          ? Promise.reject(new Error("NOSCRIPT No matching script. Please use EVAL."))
          : Promise.resolve(["ran", ...c.args.slice(2)]);
      },
    } as unknown as Redis;
    return { node, sent };
  }

  it("on a server without the script cached (restart, failover, SCRIPT FLUSH) runs it by its text, same arguments", async () => {
    const { node, sent } = freshNode();
    expect(await evalScript(node, "return ARGV", sha1("return ARGV"), ["a", "b"])).toEqual(["ran", "a", "b"]);
    expect(sent).toEqual([
      { name: "evalsha", args: [sha1("return ARGV"), "0", "a", "b"] },
      { name: "eval", args: ["return ARGV", "0", "a", "b"] },
    ]);
  });

  it("passes any other error on", async () => {
    const node = {
      sendCommand: () => Promise.reject(new Error("BUSY Redis is busy running a script")),
    } as unknown as Redis;
    await expect(evalScript(node, "return 1", sha1("return 1"), [])).rejects.toThrow(/BUSY/);
  });
});
