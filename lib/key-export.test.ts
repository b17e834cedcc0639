import { describe, expect, it } from "vitest";
import type { KeyEntry } from "@/lib/api/keys";
import { keysToCsv, keysToJson, sortKeys } from "./key-export";

const k = (uuid: string, ttlMs: number | null, bytes: number | null, extra: Partial<KeyEntry> = {}): KeyEntry => ({
  key: `s:dedup:h:${uuid}`,
  uuid,
  state: "done",
  ttlMs,
  bytes,
  ...extra,
});

describe("a key-browser page sorted and exported", () => {
  it("sorts by TTL (no TTL first: the keys that never expire) and by size, largest first", () => {
    const page = [k("a", 5, 90), k("b", -1, 70), k("c", 900, 110), k("d", null, null)];
    expect(sortKeys(page, "ttl").map((x) => x.uuid)).toEqual(["b", "c", "a", "d"]);
    expect(sortKeys(page, "size").map((x) => x.uuid)).toEqual(["c", "a", "b", "d"]);
    expect(sortKeys(page, "scan").map((x) => x.uuid)).toEqual(["a", "b", "c", "d"]);
  });

  it("exports CSV with the record position, quoting commas and defusing formulas; JSON round-trips", () => {
    const page = [
      k("a", 5, 90, { record: { topic: "demo.events", partition: 2, offset: "17" } }),
      k("=1+1", -1, 70, { key: 's:dedup:h:"x,y"' }),
    ];
    const csv = keysToCsv(page).trim().split("\n");
    expect(csv[0]).toBe("key,uuid,state,ttlMs,bytes,recordTopic,recordPartition,recordOffset");
    expect(csv[1]).toBe("s:dedup:h:a,a,done,5,90,demo.events,2,17");
    expect(csv[2]).toBe(`"s:dedup:h:""x,y""",'=1+1,done,-1,70,,,`);
    expect(JSON.parse(keysToJson(page))).toEqual(page);
  });
});
