/** What the lint answers: its severities, rule ids and findings, and how a rule adds one. Types only. */

/** Severity of a finding. */
export type LintSeverity = "error" | "warning" | "info";

/** Rule ids. */
export type LintRule =
  | "ttl-below-minimum"
  | "ttl-below-hour"
  | "critical-ttl-below-7d"
  | "no-deduplicator"
  | "dedup-outside-retry"
  | "dedup-outside-poison-queue"
  | "poison-queue-inside-retry"
  | "naive-marking-inside-retry"
  | "key-correlation-id"
  | "key-business-key"
  | "key-payload-hash"
  | "in-memory-with-replicas"
  | "fail-open-critical"
  | "handler-p99-near-lease"
  | "no-timeout"
  | "timeout-not-below-lease"
  | "db-side-effect-without-inbox"
  | "kafka-output-without-transactions"
  | "deduplicator-in-transactions";

/** One finding. */
export interface LintFinding {
  severity: LintSeverity;
  rule: LintRule;
  message: string;
  /** Section of docs/spec idempotent-consumer.md, e.g. "§3". */
  specSection: string;
}

/** Adds one finding. */
export type Add = (severity: LintSeverity, rule: LintRule, specSection: string, message: string) => void;
