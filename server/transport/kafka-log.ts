import { logLevel, type logCreator } from "kafkajs";

/**
 * kafkajs log lines as one short console line each (its default prints JSON blobs). Rebalance
 * chatter at INFO is dropped by the level the clients are created with (WARN by default).
 */
const RETRIED = ["does not host this topic-partition", "There is no leader for this topic-partition", "This is not the correct coordinator"];

export const kafkaLogCreator: logCreator = () => ({ namespace, level, log }) => {
  const { message, error } = log as { message: string; error?: string };
  // Retriable metadata races right after a topic is created or deleted: kafkajs retries them.
  if (namespace === "Connection" && error && RETRIED.some((r) => error.includes(r))) return;
  const line = `[kafka ${namespace}] ${message}${error ? `: ${error}` : ""}`;
  if (level === logLevel.ERROR) console.error(line);
  else if (level === logLevel.WARN) console.warn(line);
  else console.log(line);
};
