/**
 * The PostgreSQL inbox as a middleware: each delivery runs in one database transaction that first
 * inserts the message's inbox row (`PostgresInboxRepository.claimIn`) and then calls the handler,
 * which writes its side effect through {@link inboxTransaction}`(msg)`. One COMMIT makes both
 * durable; a failed handler rolls both back. A copy whose row is already committed is swallowed, as
 * the Deduplicator swallows a `done` key, with the same metrics.
 */
import type { Registry } from "prom-client";
import { handlerGroupId } from "../../../names/kafka";
import { dedupKeyPrefix } from "../../../names/keys";
import { DEDUP_ERROR_REASON, PROCESSED_RESULT, type PayloadDifference } from "../../../names/dedup";
import { INFO_MARKING, INFO_MODE, type InfoSideEffect } from "../../../names/contract";
import { DedupStoreError, InProgressError, PayloadConflictError } from "../errors";
import { namedMiddleware, type Handler, type Message, type Middleware } from "../message";
import { dedupRecorder, type DedupRecorder } from "../metrics/recorder";
import { LOCK_NOT_AVAILABLE, sqlState, type InboxSqlClient } from "../repository/inbox-sql";
import type { InboxClaim, PostgresInboxRepository } from "../repository/postgres-inbox-repository";
import { duplicateCause, positionOf, storedFingerprint } from "../repository/stored-value";
import { DEFAULT_DEDUPLICATOR_OPTIONS, type PayloadConflictAction } from "./deduplicator-options";
import { exportHandlerInfo, type HandlerInfo } from "./handler-info";
import { PayloadFingerprints, type FingerprintOptions } from "./payload-fingerprint";

/** Options of {@link inbox}. */
export interface InboxOptions {
  /** The inbox table and its connection pool. Required. */
  repository: PostgresInboxRepository;
  /** Service name: the rows' `service` column and the `service` metric label. @default "app" */
  service?: string;
  /** How long a committed row keeps later copies out (its `expires_at`). @default 86400000 (24 h) */
  ttlMs?: number;
  /**
   * How long a copy waits for the same UUID's transaction in flight on another consumer (the
   * transaction's `lock_timeout`) before it fails with `InProgressError` (retried, redelivered).
   * @default 60000 (the Deduplicator's default lease)
   */
  lockTimeoutMs?: number;
  /** A copy with the same UUID and another payload: `"poison"` fails it with `PayloadConflictError`. @default "poison" */
  onPayloadConflict?: PayloadConflictAction;
  /**
   * Which fields of a JSON payload make the fingerprint stored in the row and compared with a later
   * copy's — the Deduplicator's option of the same name, the same function: a copy differing only in
   * an excluded field is a repeat, one differing in a chosen field a conflict counted as `fields`;
   * **a payload that is not UTF-8 JSON falls back to its bytes** (counted `bytes`, and in
   * `dedup_fingerprint_fallbacks_total`). @default the payload's bytes
   */
  fingerprint?: FingerprintOptions;
  /** Registry of the metrics and `dedup_handler_info`. @default none */
  registry?: Registry;
  /** The handler's middleware names, outermost first, for `dedup_handler_info`'s `stack`. @default ["deduplicator"] */
  stack?: readonly string[];
  /** The handler's kinds of side effect, for `dedup_handler_info`'s `side_effects`. @default none declared */
  sideEffects?: readonly InfoSideEffect[];
}

/** Defaults of {@link InboxOptions}. */
export const DEFAULT_INBOX_OPTIONS = {
  service: DEFAULT_DEDUPLICATOR_OPTIONS.service,
  ttlMs: DEFAULT_DEDUPLICATOR_OPTIONS.ttlMs,
  lockTimeoutMs: DEFAULT_DEDUPLICATOR_OPTIONS.leaseMs,
  onPayloadConflict: DEFAULT_DEDUPLICATOR_OPTIONS.onPayloadConflict,
  stack: ["deduplicator"],
} as const;

/** The open transaction of each message being handled under an inbox. */
const transactions = new WeakMap<Message, InboxSqlClient>();

/**
 * The transaction a handler under {@link inbox} writes its side effect in: its statements commit
 * with the message's inbox row, or roll back with it. **Only while the handler runs**; throws
 * outside an inbox (a handler wired without one would otherwise write outside the guarantee).
 */
export function inboxTransaction(msg: Message): InboxSqlClient {
  const tx = transactions.get(msg);
  if (!tx) throw new Error(`inboxTransaction: message ${msg.uuid} is not being handled under the inbox middleware`);
  return tx;
}

/** A claim that failed before the handler ran (the store's failure, not the handler's). */
class ClaimFailed extends Error {}

/** Counts each delivery's result once: at its first final outcome, or `error` when it settles without one. */
class InboxResults {
  private readonly states = new WeakMap<Message, { final: boolean }>();
  constructor(private readonly rec: DedupRecorder) {}

  final(msg: Message, topic: string, handler: string, result: "success" | "deduplicated"): void {
    const st = this.states.get(msg);
    if (st?.final) return;
    if (st) st.final = true;
    else this.states.set(msg, { final: true });
    this.rec.result(topic, handler, PROCESSED_RESULT[result]);
  }

  /** A failed attempt: the delivery counts `error` when it settles (now, without a Router) unless a later attempt ends it. */
  failed(msg: Message, topic: string, handler: string): void {
    if (this.states.has(msg)) return;
    const st = { final: false };
    this.states.set(msg, st);
    const count = () => st.final || this.rec.result(topic, handler, PROCESSED_RESULT.error);
    if (msg.context.onSettled) msg.context.onSettled(() => count());
    else count();
  }
}

/**
 * The inbox middleware (its stack name is `deduplicator`, where the Deduplicator would stand).
 * **Exactly once for database effects**: the side effect is committed at most once per UUID within
 * `ttlMs`, and whenever it is, its row is too. Effects outside the transaction (HTTP calls,
 * produced messages) keep the Deduplicator's at-least-once.
 */
export function inbox(options: InboxOptions): Middleware {
  const o = { ...DEFAULT_INBOX_OPTIONS, ...options };
  if (!(Number.isInteger(o.ttlMs) && o.ttlMs > 0)) throw new RangeError("inbox: ttlMs must be a positive integer");
  if (!(o.lockTimeoutMs > 0)) throw new RangeError("inbox: lockTimeoutMs must be > 0");
  const rec = dedupRecorder(o.registry, o.service);
  const fingerprints = new PayloadFingerprints(o.fingerprint, (handler) => rec.fingerprintFallback(handler));
  const results = new InboxResults(rec);
  const handle = async (next: Handler, msg: Message): Promise<void | Message[]> => {
    const topic = msg.context.topic ?? "";
    const handler = msg.context.handler ?? "default";
    const claim: InboxClaim = {
      service: o.service,
      handler,
      uuid: msg.uuid,
      position: positionOf(msg.context),
      fingerprint: fingerprints.of(msg.payload, handler),
      ttlMs: o.ttlMs,
    };
    const key = `${dedupKeyPrefix(o.service, handler)}:${msg.uuid}`;
    try {
      const out = await o.repository.pool.transaction(
        async (tx) => {
          const t0 = performance.now();
          const held = await o.repository.claimIn(tx, claim).catch((e: unknown) => {
            throw new ClaimFailed("inbox claim failed", { cause: e });
          });
          const t1 = performance.now();
          rec.check(handler, t1, (t1 - t0) / 1000, t0);
          if (held) {
            const conflict = { onConflict: o.onPayloadConflict, compared: () => fingerprints.compared(msg.payload) };
            return swallowed(rec, conflict, { topic, handler, key, claim, held: held.state });
          }
          transactions.set(msg, tx);
          try {
            return { ran: await next(msg) };
          } finally {
            transactions.delete(msg);
          }
        },
        { lockTimeoutMs: o.lockTimeoutMs },
      );
      results.final(msg, topic, handler, "ran" in out ? "success" : "deduplicated");
      return "ran" in out ? out.ran : undefined;
    } catch (e) {
      if (e instanceof PayloadConflictError) throw e;
      results.failed(msg, topic, handler);
      if (!(e instanceof ClaimFailed)) throw e;
      if (sqlState(e.cause) === LOCK_NOT_AVAILABLE) {
        rec.inProgress(topic, handler);
        throw new InProgressError(key);
      }
      rec.error(DEDUP_ERROR_REASON.redisConn, handler);
      throw new DedupStoreError(DEDUP_ERROR_REASON.redisConn, `inbox claim of ${key} failed: ${String(e.cause)}`, {
        cause: e.cause,
      });
    }
  };
  return namedMiddleware("deduplicator", (next) => (msg) => handle(next, msg), {
    onRegister: (h) => {
      rec.register(h.topic, h.name);
      if (o.registry) exportHandlerInfo(o.registry, inboxInfo(o, h.name, h.topic));
    },
  });
}

/** The `dedup_handler_info` of handler `name` under an inbox: marking `inbox`, mode `postgres-inbox`, no lease (nor heartbeat), always fail-closed. */
function inboxInfo(
  o: Required<Omit<InboxOptions, "registry" | "fingerprint" | "sideEffects">> & Pick<InboxOptions, "sideEffects">,
  name: string,
  topic: string,
): HandlerInfo {
  return {
    service: o.service,
    handler: name,
    topic,
    group: handlerGroupId(o.service, name),
    prefix: dedupKeyPrefix(o.service, name),
    ttlMs: o.ttlMs,
    ttlClass: null,
    leaseMs: null,
    timeoutMs: null,
    marking: INFO_MARKING.inbox,
    failureMode: "closed",
    stack: o.stack,
    repository: o.repository.kind,
    heartbeat: false,
    ...(o.sideEffects ? { sideEffects: o.sideEffects } : {}),
    mode: INFO_MODE.postgresInbox,
  };
}

/**
 * A copy whose row is committed: its cause counted (the result is counted by the caller); a payload
 * conflict is counted by what was `compared` (the chosen fields, or the bytes) and under "poison" throws.
 */
function swallowed(
  rec: DedupRecorder,
  c: { onConflict: PayloadConflictAction; compared: () => PayloadDifference },
  d: { topic: string; handler: string; key: string; claim: InboxClaim; held: string },
): { swallowed: true } {
  const stored = storedFingerprint(d.held);
  const mine = d.claim.fingerprint ?? "";
  if (stored !== undefined && stored !== mine) {
    rec.payloadConflict(d.handler, c.compared());
    if (c.onConflict === "poison") throw new PayloadConflictError(d.key, stored, mine);
  }
  rec.duplicate(d.topic, d.handler, duplicateCause(d.held, d.claim.position));
  return { swallowed: true };
}
