/**
 * The publisher `POST /api/dlq/redrive` sends with: one Kafka producer of the dashboard process
 * (kept on globalThis: Next.js evaluates modules more than once), made from `KAFKA_BROKERS`; in
 * embedded mode the embedded broker's publisher (./memory-reader).
 */
import type { Publisher } from "@/server/dedup";
import { KafkaPublisher } from "@/server/transport/kafka-publisher";
import { kafkaOrEmbedded } from "./kafka-or-embedded";

const publisher = kafkaOrEmbedded<Publisher>("__dedupHealthRedrivePublisher", {
  kafka: (brokers) => new KafkaPublisher({ brokers, clientId: "dedup-health-redrive" }),
  embedded: (log) => log.publisher(),
  without: "a re-drive publishes to Kafka (set KAFKA_BROKERS) or to the embedded demo's topics",
});

/** The process's re-drive publisher (Kafka, else the embedded broker); a 503 naming `KAFKA_BROKERS` when there is neither. */
export function redrivePublisher(): Publisher {
  return publisher.get();
}

/** Replaces the process's re-drive publisher (tests), or with `null` closes and forgets it. */
export function setRedrivePublisher(p: Publisher | null): Promise<void> {
  return publisher.set(p);
}
