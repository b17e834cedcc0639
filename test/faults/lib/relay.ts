/**
 * The fault worker's Kafka-to-Kafka handler (`WorkerHandler.relay`): one output `out-<input uuid>`
 * per input, published to the relay's output topic — in the Kafka-transactions mode (the
 * subscriber's transactional publisher, no Deduplicator) or by a plain publisher inside the
 * Redis-deduplicated stack.
 */
import { type Handler, type HandlerConfig, type Middleware, newMessage, type Publisher } from "@/server/dedup";
import type { KafkaSubscriber } from "@/server/transport/kafka-subscriber";

/** What a worker handler declares to be a relay. */
export interface RelaySpec {
  outputTopic: string;
  /** The Kafka-transactions mode; false: the Redis mode (the worker's stack). */
  transactions: boolean;
}

/** The same handler in both modes: one output per input, its UUID derived from the input's. */
const relayHandler: Handler = async (msg) => [newMessage(`out-${msg.uuid}`, msg.payload)];

/**
 * The handler config of a relay. The transactions mode's guarantee is the transaction, so its stack
 * has no Deduplicator: a `done` mark written before an aborted commit would swallow the redelivery
 * and lose the output.
 */
export function relayConfig(
  base: Pick<HandlerConfig, "name" | "topic">,
  relay: RelaySpec,
  sub: KafkaSubscriber,
  publisher: Publisher,
  redisStack: Middleware[],
): HandlerConfig {
  return {
    ...base,
    subscriber: sub,
    publisher: relay.transactions ? sub.transactionalPublisher : publisher,
    publishTopic: relay.outputTopic,
    handler: relayHandler,
    middleware: relay.transactions ? [] : redisStack,
  };
}
