/**
 * A client the dashboard process holds once — to Kafka when `KAFKA_BROKERS` is set, else to the
 * embedded demo's broker (./memory-reader): the record reader and the re-drive publisher.
 */
import { config } from "@/server/config";
import { UpstreamUnavailableError } from "../core/errors";
import { embeddedLog, type EmbeddedLog } from "./memory-reader";

/** The process's one client of a kind, and the seam tests replace it through. */
export interface ProcessClient<T> {
  /** The Kafka client (made once, kept on `globalThis`: Next.js evaluates modules more than once), else the embedded broker's; a 503 when there is neither. */
  get(): T;
  /** Replaces the client (tests), or with `null` closes and forgets it. */
  set(client: T | null): Promise<void>;
}

/**
 * The client kept on `globalThis[slot]`: `kafka` makes it from `KAFKA_BROKERS`; without them
 * `embedded` makes one over the embedded broker at each call (it lives as long as the demo).
 * `without` says what the client is for, in the 503 when neither runs.
 */
export function kafkaOrEmbedded<T extends { close(): Promise<void> }>(
  slot: string,
  make: { kafka: (brokers: readonly string[]) => T; embedded: (log: EmbeddedLog) => T; without: string },
): ProcessClient<T> {
  const g = globalThis as unknown as Record<string, T | null | undefined>;
  return {
    get() {
      const kept = g[slot];
      if (kept) return kept;
      const brokers = config().KAFKA_BROKERS;
      const embedded = embeddedLog();
      if (brokers?.length) return (g[slot] = make.kafka(brokers));
      if (embedded) return make.embedded(embedded);
      throw new UpstreamUnavailableError(
        `kafka: not configured and no embedded broker runs (DEMO=off); ${make.without}`,
      );
    },
    async set(client) {
      const old = g[slot];
      g[slot] = client;
      if (old && old !== client) await old.close();
    },
  };
}
