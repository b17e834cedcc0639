import { logLevel, type logCreator } from "kafkajs";

/**
 * kafkajs log lines as one short console line each (its default prints JSON blobs), at the level
 * the clients are created with (WARN by default).
 */
const RETRIED = [
  "does not host this topic-partition",
  "There is no leader for this topic-partition",
  "This is not the correct coordinator",
];

/**
 * The normal course of a consumer group, which kafkajs reports as errors or warnings: a member
 * joining or leaving makes every other member's heartbeat answer REBALANCE_IN_PROGRESS ("The group
 * is rebalancing, so a rejoin is needed"), and the consumer re-joins by itself. Logged at INFO —
 * under the default WARN not at all — so a dev log is not a wall of them at each rebalance.
 */
const ROUTINE = ["The group is rebalancing", "The group is rebalancing, re-joining"];

/** The level a line is printed at: routine rebalance chatter is demoted to INFO. */
function levelOf(level: logLevel, message: string, error: string | undefined): logLevel {
  if (level < logLevel.INFO && ROUTINE.some((r) => message.startsWith(r) || error?.startsWith(r))) return logLevel.INFO;
  return level;
}

/** kafkajs `logCreator`: one console line per log entry, rebalance chatter demoted (see {@link ROUTINE}). */
export const kafkaLogCreator: logCreator =
  (clientLevel) =>
  ({ namespace, level, log }) => {
    const { message, error } = log as { message: string; error?: string };
    // Retriable metadata races right after a topic is created or deleted: kafkajs retries them.
    if (namespace === "Connection" && error && RETRIED.some((r) => error.includes(r))) return;
    const at = levelOf(level, message, error);
    if (at > clientLevel) return;
    const line = `[kafka ${namespace}] ${message}${error ? `: ${error}` : ""}`;
    if (at === logLevel.ERROR) console.error(line);
    else if (at === logLevel.WARN) console.warn(line);
    else console.log(line);
  };
