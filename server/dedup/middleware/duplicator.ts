import type { Message } from "../message";
import { namedMiddleware, type Middleware } from "../message";

/** Options of {@link duplicator}. */
export interface DuplicatorOptions {
  /** How many times each message is handed to the next handler, one after the other. @default 2 */
  copies?: number;
}

/** Defaults of {@link DuplicatorOptions}. */
export const DEFAULT_DUPLICATOR_OPTIONS = { copies: 2 } as const satisfies Required<DuplicatorOptions>;

/**
 * **A test tool, not production middleware** (Watermill's `Duplicator`, watermill#131): hands each
 * message to the next handler `copies` times in a row, as a redelivery would, so a CI test can
 * check that a handler is idempotent on its own (spec §5) — its side effects must be the same as
 * with one delivery. Put it innermost (after the Deduplicator, or without one) to test the handler;
 * outside the Deduplicator the copies are swallowed and it tests the Deduplicator instead.
 * The first failing copy fails the whole call; the produced messages of every copy are returned
 * (Watermill's behaviour), so downstream consumers see the duplicates too.
 * @throws RangeError when `copies` is not an integer in [1, 100].
 */
export function duplicator(options: DuplicatorOptions = {}): Middleware {
  const { copies } = { ...DEFAULT_DUPLICATOR_OPTIONS, ...options };
  if (!(Number.isInteger(copies) && copies >= 1 && copies <= 100))
    throw new RangeError(`duplicator: copies must be an integer in [1, 100], got ${copies}`);
  return namedMiddleware("duplicator", (next) => async (msg) => {
    const produced: Message[] = [];
    for (let i = 0; i < copies; i++) {
      const out = await next(msg);
      if (out) produced.push(...out);
    }
    return produced.length > 0 ? produced : undefined;
  });
}
