/**
 * The contract's clauses as the conformance kit judges them, one entry each: its name (what the
 * kit prints), what it says, and how the evidence of a run holds it, breaks it, or cannot tell
 * ("not measured": the consumer does not export the signal the clause needs — never a pass).
 */
import { judgeCommits, judgeConflict, judgeDuplicates, judgePoison } from "./delivery-clauses";
import { broken, held, type Clause } from "./judging";
import { judgeClaim, judgeDone, judgeFingerprint, judgeRelease, judgeRetry, judgeTtl } from "./key-clauses";
import { judgeCounts, judgeHot, judgeInfo, metricsProblems, zeroSeriesMissing } from "./metrics-clauses";

export type { Clause, ClauseStatus, Verdict } from "./judging";

/** The clauses, in the order the kit prints them. */
export const CLAUSES: readonly Clause[] = [
  {
    name: "zero-series",
    says: "every label value of the handler's counters exists at 0 before its first event",
    judge: (e) => {
      const m = zeroSeriesMissing(e.scrapes.before, e);
      return m.length
        ? broken(`missing before the run: ${m.join(", ")}`)
        : held("every label value at 0 before the run");
    },
  },
  {
    name: "metrics-names",
    says: "the library's metrics under their exact names and label names",
    judge: (e) => {
      const m = metricsProblems(e);
      return m.length ? broken(m.join("; ")) : held("every metric of the contract with its labels");
    },
  },
  { name: "dedup-handler-info", says: "dedup_handler_info{…} = 1 describes the handler", judge: judgeInfo },
  {
    name: "claim-before-handler",
    says: "a fresh key is claimed with SET processing:<token> NX PX <lease> before the handler runs",
    judge: judgeClaim,
  },
  {
    name: "done-with-position",
    says: "after success the key holds done:<topic>:<partition>:<offset> of the first delivery",
    judge: judgeDone,
  },
  { name: "done-ttl", says: "a done key lives for the declared TTL (at least 10 min)", judge: judgeTtl },
  {
    name: "payload-fingerprint",
    says: "#<fingerprint> is the first 7 base64url characters of the payload's SHA-256",
    judge: judgeFingerprint,
  },
  {
    name: "duplicate-counted",
    says: "a copy is swallowed and counted once in deduplicated and processed{deduplicated}",
    judge: judgeDuplicates,
  },
  {
    name: "hot-uuids",
    says: "swallowed copies are counted in the exported top 10 of the handler's UUIDs",
    judge: judgeHot,
  },
  { name: "payload-conflict", says: "a copy with another payload is a conflict, not a repeat", judge: judgeConflict },
  {
    name: "poison-to-dlq",
    says: "a record that fails for good goes to <topic>.dlq with the poison headers",
    judge: judgePoison,
  },
  { name: "release-on-failure", says: "a failed handler's claim is deleted (compare-and-delete)", judge: judgeRelease },
  { name: "failure-then-success", says: "the UUID of a failed record runs when it comes again", judge: judgeRetry },
  {
    name: "processed-counted",
    says: "messages_processed_total moves once per delivery by its result",
    judge: judgeCounts,
  },
  { name: "offsets-committed", says: "offsets are committed after processing", judge: judgeCommits },
];
