import { describe, expect, it } from "vitest";
import {
  findPreview,
  keepPreview,
  PREVIEW_KEYS_MAX,
  PREVIEW_KEYS_TOTAL_MAX,
  PREVIEW_TTL_MS,
  PREVIEWS_MAX,
  type Preview,
} from "./previews";

const sel = { state: "done" as const, olderThanMs: null, leases: "dead" as const, uuids: null };
const preview = (n: number, tag = "k"): Preview => ({
  prefix: "s:dedup:h",
  action: "forget",
  selection: sel,
  at: new Date(),
  keys: new Map(Array.from({ length: n }, (_, i) => [`s:dedup:h:${tag}${i}`, "done"])),
});

describe("dry-run previews kept for the real action", () => {
  it("keeps a preview for its time, then forgets it", () => {
    const t = 1_000_000;
    const kept = keepPreview(preview(3), t);
    expect(kept.id).not.toBeNull();
    expect(findPreview(kept.id!, t + PREVIEW_TTL_MS - 1)?.keys.size).toBe(3);
    expect(findPreview(kept.id!, t + PREVIEW_TTL_MS)).toBeNull();
  });

  it("does not keep a preview larger than one may be, and says so", () => {
    const r = keepPreview(preview(PREVIEW_KEYS_MAX + 1));
    expect(r.id).toBeNull();
    expect(r).toMatchObject({ note: expect.stringMatching(/more than the 100000 a preview keeps/) });
  });

  it("drops the oldest previews beyond the count and the total of keys", () => {
    const t = 2_000_000;
    const ids = Array.from({ length: PREVIEWS_MAX + 2 }, (_, i) => keepPreview(preview(1, `c${i}`), t + i).id!);
    expect(findPreview(ids[0]!, t + 100)).toBeNull();
    expect(findPreview(ids[1]!, t + 100)).toBeNull();
    expect(findPreview(ids.at(-1)!, t + 100)).not.toBeNull();
    const big = Array.from(
      { length: 3 },
      (_, i) => keepPreview(preview(PREVIEW_KEYS_TOTAL_MAX / 2, `b${i}`), t + 50 + i).id!,
    );
    expect(findPreview(big[0]!, t + 100)).toBeNull();
    expect(findPreview(big[1]!, t + 100)).not.toBeNull();
    expect(findPreview(big[2]!, t + 100)).not.toBeNull();
  });
});
