/**
 * The publisher `POST /api/dlq/redrive` sends with: one Kafka producer of the dashboard process
 * (kept on globalThis: Next.js evaluates modules more than once), made from `KAFKA_BROKERS`; in
 * embedded mode the embedded broker's publisher (./memory-reader).
 */
import type { Publisher } from "@/server/dedup/pubsub";
import { config } from "@/server/config";
import { KafkaPublisher } from "@/server/transport/kafka-publisher";
import { UpstreamUnavailableError } from "../errors";
import { embeddedLog } from "./memory-reader";

type G = typeof globalThis & { __dedupHealthRedrivePublisher?: Publisher | null };

/** The process's re-drive publisher (Kafka, else the embedded broker); a 503 naming `KAFKA_BROKERS` when there is neither. */
export function redrivePublisher(): Publisher {
  const g = globalThis as G;
  if (g.__dedupHealthRedrivePublisher) return g.__dedupHealthRedrivePublisher;
  const brokers = config().KAFKA_BROKERS;
  const embedded = embeddedLog();
  if (brokers?.length) g.__dedupHealthRedrivePublisher = new KafkaPublisher({ brokers, clientId: "dedup-health-redrive" });
  else if (embedded) return embedded.publisher();
  else throw new UpstreamUnavailableError("kafka: not configured and no embedded broker runs (DEMO=off); a re-drive publishes to Kafka (set KAFKA_BROKERS) or to the embedded demo's topics");
  return g.__dedupHealthRedrivePublisher;
}

/** Replaces the process's re-drive publisher (tests), or with `null` closes and forgets it. */
export async function setRedrivePublisher(p: Publisher | null): Promise<void> {
  const g = globalThis as G;
  const old = g.__dedupHealthRedrivePublisher;
  g.__dedupHealthRedrivePublisher = p;
  if (old && old !== p) await old.close();
}
