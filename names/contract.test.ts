import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkContract } from "@/server/testing/contract-doc";

const DOC = readFileSync(new URL("../docs/CONTRACT.md", import.meta.url), "utf8");

/** The doc with the first occurrence of `from` replaced by `to` (a planted disagreement). */
function planted(from: string, to: string): string {
  expect(DOC).toContain(from);
  return DOC.replace(from, to);
}

describe("docs/CONTRACT.md", () => {
  it("agrees with names/ and the library: metric names, types, labels, buckets, label values, value forms, fingerprint, TTLs, info labels, DLQ headers", () => {
    expect(checkContract(DOC)).toEqual([]);
  });

  it("a renamed metric in the doc is named", () => {
    const found = checkContract(
      planted("| `messages_poisoned_total` | counter", "| `messages_dead_lettered_total` | counter"),
    );
    expect(found).toContain("metric messages_poisoned_total (names/dedup.ts) is not in the metrics table");
    expect(found).toContain("metric messages_dead_lettered_total is in the doc but not in names/dedup.ts");
  });

  it("a label, a label value, a bucket and an info label that differ are each named", () => {
    expect(checkContract(planted("`service`, `handler`, `reason` |", "`service`, `handler`, `cause` |"))).toContain(
      "metric deduplication_unchecked_total: labels in the doc service, handler, cause, in names/ service, handler, reason",
    );
    expect(checkContract(planted("`redelivery`, `republish`, `unknown`", "`redelivery`, `republish`"))).toContain(
      "label messages_duplicates_by_cause_total/cause: values in the doc redelivery, republish, in names/ redelivery, republish, unknown",
    );
    expect(
      checkContract(planted("`1`, `2.5` |", "`1`, `5` |")).some((m) =>
        m.startsWith("metric deduplication_check_duration_seconds: buckets"),
      ),
    ).toBe(true);
    expect(
      checkContract(planted("| `failure_mode` | `open` or `closed`", "| `fail_mode` | `open` or `closed`")).some((m) =>
        m.startsWith("dedup_handler_info labels in the doc"),
      ),
    ).toBe(true);
  });

  it("a value form the library reads otherwise, and a wrong fingerprint, are named", () => {
    expect(checkContract(planted("| `1` | naive |", "| `1` | done |"))).toContain(
      "value 1: the doc says done, the library reads 1 as naive",
    );
    expect(checkContract(planted('| `{"id":1}` | `A3ySFO7` |', '| `{"id":1}` | `A3ySFO8` |'))).toContain(
      'fingerprint of "{\\"id\\":1}": the doc says A3ySFO8, the library computes A3ySFO7',
    );
  });

  it("a TTL, a DLQ header and a figure's need that the contract does not define are named", () => {
    expect(checkContract(planted("| `critical` | `604800000` |", "| `critical` | `86400000` |"))).toContain(
      "TTL class critical: 86400000 ms in the doc, 604800000 in names/",
    );
    expect(
      checkContract(planted("| `handler_poisoned` |", "| `handler_failed` |")).some((m) =>
        m.startsWith("DLQ headers in the doc"),
      ),
    ).toBe(true);
    expect(
      checkContract(
        planted(
          "| processed by result | `messages_processed_total` |",
          "| processed by result | `messages_handled_total` |",
        ),
      ),
    ).toContain('figure "processed by result" needs messages_handled_total, which the contract does not define');
  });

  it("a label the transactions mode leaves out must be said not to apply there, and only such a label", () => {
    expect(
      checkContract(planted("; under marking `kafka-transaction` it does not apply (nothing is claimed)", "")),
    ).toContain(
      "dedup_handler_info label lease_ms: the doc does not say it does not apply under marking kafka-transaction; names/ TRANSACTIONS_DECLARATION leaves it out",
    );
    expect(
      checkContract(
        planted(
          "| `runtime` | `node`, `jvm`, `go`, … | unknown |",
          "| `runtime` | `node`, `jvm`, `go`, … | unknown; under marking `kafka-transaction` it does not apply |",
        ),
      ),
    ).toContain(
      "dedup_handler_info label runtime: the doc says it does not apply under marking kafka-transaction; names/ TRANSACTIONS_DECLARATION keeps it",
    );
  });
});
