/**
 * The conformance kit: drives a consumer (./evidence), judges every clause (./clauses) and prints
 * each held, broken or not measured by name. `npm run conformance` is its command line.
 */
import { CLAUSES, type ClauseStatus } from "./clauses";
import { collectEvidence, type ConformanceOptions } from "./evidence";

export type { ConformanceOptions } from "./evidence";

/** One clause's outcome. */
export interface ClauseOutcome {
  clause: string;
  status: ClauseStatus;
  detail: string;
}

/** A run's outcomes, and whether any clause was broken. */
export interface ConformanceReport {
  outcomes: ClauseOutcome[];
  broken: string[];
}

/** Runs the kit against one consumer's handler. */
export async function runConformance(o: ConformanceOptions): Promise<ConformanceReport> {
  const e = await collectEvidence(o);
  const outcomes = CLAUSES.map((c) => {
    try {
      return { clause: c.name, ...c.judge(e) };
    } catch (err) {
      return { clause: c.name, status: "broken" as const, detail: `could not judge: ${(err as Error).message}` };
    }
  });
  return { outcomes, broken: outcomes.filter((x) => x.status === "broken").map((x) => x.clause) };
}

const MARK: Record<ClauseStatus, string> = { held: "held  ", broken: "BROKEN", "not measured": "n/m   " };

/** The report as printed: one line per clause (`held`, `BROKEN`, `n/m` = not measured), then a summary. */
export function formatReport(r: ConformanceReport, target: string): string {
  const width = Math.max(...r.outcomes.map((x) => x.clause.length));
  const lines = r.outcomes.map((x) => `${MARK[x.status]} ${x.clause.padEnd(width)}  ${x.detail}`);
  const count = (s: ClauseStatus) => r.outcomes.filter((x) => x.status === s).length;
  lines.push(
    `${target}: ${count("held")} held, ${count("broken")} broken, ${count("not measured")} not measured${r.broken.length ? ` (broken: ${r.broken.join(", ")})` : ""}`,
  );
  return lines.join("\n");
}
