/**
 * The lint's rules on what a handler's effects are and what makes them once (spec §11), decided by
 * its mode. Pure and isomorphic, as ../lint.ts.
 */
import { INFO_MODE, storeMode, type InfoMode } from "../../../names/contract";
import type { Add } from "./finding";
import type { HandlerSetup } from "./handler-setup";

/** What makes the handler's effects once: its declared mode, else the Deduplicator's on its store. */
export function modeOf(setup: Pick<HandlerSetup, "mode" | "repository">): InfoMode {
  return setup.mode ?? storeMode(setup.repository);
}

/**
 * Declared side effects the handler's mode cannot make once, and the stronger tool for each (spec
 * §11). Decided by the mode, as the dashboard does from `dedup_handler_info`: the inbox table used
 * as the Deduplicator's plain store is mode `custom`, two writes like Redis.
 */
export function effectRules(setup: HandlerSetup, add: Add): void {
  const { sideEffects = [] } = setup;
  const mode = modeOf(setup);
  if (sideEffects.includes("postgres") && mode !== INFO_MODE.postgresInbox)
    add(
      "warning",
      "db-side-effect-without-inbox",
      "§11",
      mode === INFO_MODE.kafkaTransactions
        ? "writes to PostgreSQL in mode kafka-transactions: the Kafka transaction covers produced messages and offsets only, so the row is written again when an aborted chunk runs again. Use the PostgreSQL inbox for the database write."
        : `writes to PostgreSQL but dedups in ${mode === INFO_MODE.custom ? `a ${setup.repository} store outside the handler's transaction` : mode}: the row and the done mark are two writes, so a crash between them, a failed done mark or a lost lease writes the row twice. Use the PostgreSQL inbox: the claim is a row in the side effect's own transaction, committed with it or not at all.`,
    );
  if (sideEffects.includes("kafka") && mode !== INFO_MODE.kafkaTransactions)
    add(
      "warning",
      "kafka-output-without-transactions",
      "§11",
      `produces Kafka messages in mode "${mode}": a redelivery after a crash before the done mark publishes them again. Use mode "kafka-transactions" (outputs and consumed offsets in one transaction, read_committed consumers downstream); it covers produced messages only.`,
    );
}
