/**
 * The Router's configuration types: a handler's config, the Router's options and defaults, and the
 * error event it reports.
 */
import type { Handler, Message, Middleware } from "../message";
import type { Publisher, Subscriber } from "../pubsub";

/** One handler of a Router. */
export interface HandlerConfig {
  /** Unique handler name; part of the dedup key prefix `<service>:dedup:<name>` and of metric labels. */
  name: string;
  /** Topic to consume. */
  topic: string;
  /** Transport that delivers `topic`. */
  subscriber: Subscriber;
  /** The handler. */
  handler: Handler;
  /** Where messages returned by the handler are published (with `publishTopic`). */
  publisher?: Publisher;
  /** Topic for messages returned by the handler. Required with `publisher`. */
  publishTopic?: string;
  /** Handler-level middleware, inside the Router-level middleware. First = outermost. */
  middleware?: Middleware[];
  /**
   * Which messages this handler takes (routing by event type, or any predicate), decided BEFORE
   * anything else — before the batch hooks (`prepareBatch`: the Deduplicator's pre-claim) and the
   * middleware stack. A message it does not take is acked at once: no key is claimed, nothing is
   * counted in `messages_processed_total`, the handler does not run. **Route here, not in a
   * middleware**: a filtering middleware runs after the pre-claim, so every message of a batch would
   * leave a `processing:<token>` lease under this handler. A throwing predicate nacks the message
   * (reported to `onError`). Called with the Router's context set (`msg.context.handler`, `topic`).
   * @default every message
   */
  accept?: (msg: Message) => boolean;
}

/** What the Router reports when a delivery ends in nack or a batch hook fails. */
export interface RouterErrorEvent {
  handler: string;
  topic: string;
  uuid?: string;
  error: Error;
}

/** Options of {@link Router}. */
export interface RouterOptions {
  /** How long `close()` waits for in-flight deliveries before it resolves anyway. @default 30000 */
  closeTimeoutMs?: number;
  /** Called for every delivery that ends in nack, and for a failing batch hook. @default logs with console.error */
  onError?: (event: RouterErrorEvent) => void;
}

/** Defaults of {@link RouterOptions}. */
export const DEFAULT_ROUTER_OPTIONS = {
  closeTimeoutMs: 30_000,
  onError: (e: RouterErrorEvent) =>
    console.error(`[dedup router] handler ${e.handler} nacked ${e.uuid ?? "batch"}: ${e.error.message}`),
} as const satisfies Required<RouterOptions>;
