import { describe, expect, it } from "vitest";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { CommittedLog, type DecodedRecord } from "./committed-log";

let offset = 0;
const data = (uuid: string, producerId: string, inTransaction = true): DecodedRecord => ({
  offset: String(offset++),
  key: null,
  headers: { [WATERMILL_UUID_HEADER]: Buffer.from(uuid) },
  isControlRecord: false,
  batchContext: { producerId, inTransaction },
});
const marker = (producerId: string, type: "abort" | "commit"): DecodedRecord => ({
  offset: String(offset++),
  key: Buffer.from([0, 0, 0, type === "commit" ? 1 : 0]),
  isControlRecord: true,
  batchContext: { producerId, inTransaction: true },
});

describe("a partition as a read_committed reader sees it, from its transaction markers", () => {
  it("keeps committed and non-transactional records, drops aborted ones whatever order the transactions ended in", () => {
    const log = new CommittedLog();
    for (const r of [
      data("a1", "7"),
      data("b1", "8"),
      marker("8", "abort"),
      data("a2", "7"),
      data("c1", "9"),
      marker("7", "abort"),
      data("plain", "-1", false),
      marker("9", "commit"),
    ])
      log.add(r);
    expect(log.committed).toEqual(["plain", "c1"]);
    expect(log.unresolved).toBe(0);
  });

  it("a transaction without its marker is neither counted nor forgotten: it is unresolved", () => {
    const log = new CommittedLog();
    log.add(data("x1", "3"));
    log.add(data("x2", "3"));
    expect(log.committed).toEqual([]);
    expect(log.unresolved).toBe(2);
  });
});
