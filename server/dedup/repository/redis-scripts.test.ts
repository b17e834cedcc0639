/**
 * The repository calls its Lua scripts by SHA1 (EVALSHA, loading on NOSCRIPT), so replicas of two
 * versions side by side run two different scripts on one server. A changed script text must
 * therefore be a deliberate change: this table pins each script's SHA1, and editing a script
 * (or adding one) fails here until the table is updated with it.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as scripts from "./redis-scripts";

const PINNED: Record<string, string> = {
  CLAIM_LUA: "006038cf4d86a59ae40aa7616497ead492d5724b",
  CLAIM_MANY_LUA: "f358b3c6c416c0faad1209220af5dbf573c18e5e",
  CLAIM_MANY_SAME_LUA: "5c2f19505ee005e38268a7f74ce0d4ef6d59caee",
  COMPARE_AND_DELETE_LUA: "6fbe84d1140fd2047394924af9d845b83c070bec",
  COMPARE_AND_SET_LUA: "bad822b918ab5a9d729df8b9370ac68bdaca0336",
  COMPARE_AND_SET_MANY_LUA: "651f6a400e2db62c980d13a41f9b94d98cba99d1",
  COMPARE_AND_SET_MANY_SAME_EXPECTED_LUA: "404925b7606971c52a48e793f476b300ce1e28f9",
  COMPARE_AND_SET_MANY_SAME_LUA: "5db869e376a51b321a9bffaf76834b106eb7b1f9",
  EXTEND_LEASE_LUA: "e50f848e374a94192aa6f2e444e7eb8acc16501d",
  MARK_DONE_MANY_LUA: "74d582491026a62ab8341d995152a331cd71a432",
  MARK_DONE_MANY_OURS_LUA: "3174b2f7421e34f5125d461ff69ed912ad9a549a",
};

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
const exported = Object.entries(scripts).filter(
  (e): e is [string, scripts.Script] => typeof e[1] === "object" && e[1] !== null && "source" in e[1],
);

describe("the repository's Lua scripts", () => {
  it("are exactly the pinned ones: each text hashes to its pinned SHA1, and no script is missing from the table", () => {
    expect(Object.fromEntries(exported.map(([name, s]) => [name, sha1(s.source)]))).toEqual(PINNED);
  });

  it("are called by the SHA1 of their own text", () => {
    for (const [name, s] of exported) expect(s.sha, name).toBe(sha1(s.source));
  });
});
