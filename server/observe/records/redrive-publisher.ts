/**
 * The publisher `POST /api/dlq/redrive` sends with: one Kafka producer of the dashboard process
 * (kept on globalThis: Next.js evaluates modules more than once), made from `KAFKA_BROKERS`.
 */
import type { Publisher } from "@/server/dedup/pubsub";
import { config } from "@/server/config";
import { KafkaPublisher } from "@/server/transport/kafka-publisher";
import { UpstreamUnavailableError } from "../errors";

type G = typeof globalThis & { __dedupHealthRedrivePublisher?: Publisher | null };

/** The process's re-drive publisher; a 503 naming `KAFKA_BROKERS` when Kafka is not configured. */
export function redrivePublisher(): Publisher {
  const g = globalThis as G;
  if (g.__dedupHealthRedrivePublisher) return g.__dedupHealthRedrivePublisher;
  const brokers = config().KAFKA_BROKERS;
  if (!brokers?.length) throw new UpstreamUnavailableError("kafka: not configured; a re-drive publishes to Kafka (set KAFKA_BROKERS)");
  g.__dedupHealthRedrivePublisher = new KafkaPublisher({ brokers, clientId: "dedup-health-redrive" });
  return g.__dedupHealthRedrivePublisher;
}

/** Replaces the process's re-drive publisher (tests), or with `null` closes and forgets it. */
export async function setRedrivePublisher(p: Publisher | null): Promise<void> {
  const g = globalThis as G;
  const old = g.__dedupHealthRedrivePublisher;
  g.__dedupHealthRedrivePublisher = p;
  if (old && old !== p) await old.close();
}
