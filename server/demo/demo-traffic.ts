/**
 * The live demo's traffic: events of the three handlers' types at the switched rate, and the two
 * duplicate sources that send a record again with its UUID — the outbox forwarder's re-publish
 * (source c) and, in the background, the producer re-sending what it lost the ack of.
 */
import { setTimeout as delay } from "node:timers/promises";
import { ulid } from "ulid";
import type { Message, Publisher } from "@/server/dedup";
import { CORRELATION_ID_KEY, EVENT_TYPE_KEY } from "@/names/dedup";
import { DEMO_HANDLER_SPECS } from "@/server/notification/demo-handlers";
import type { BackgroundDuplicates } from "./background-duplicates";
import type { DemoSourcesState } from "./demo-options";

/** Waits `ms`, or less when `signal` aborts (the demo stops). */
export const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  delay(ms, undefined, { signal }).catch(() => undefined);

/** Time between two publishes of the traffic loop. */
const TICK_MS = 100;

/** Publishes the demo's events and the copies its duplicate sources send. */
export class DemoTraffic {
  private seq = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  /** `signal` aborts when the demo stops: the loop ends and no copy is sent after it. */
  constructor(
    private readonly publisher: Publisher,
    private readonly topic: string,
    private readonly sources: Pick<DemoSourcesState, "traffic" | "forwarderRepublish">,
    private readonly background: BackgroundDuplicates | null,
    private readonly signal: AbortSignal,
  ) {}

  /** Publishes `traffic.ratePerSec` events a second while the traffic is on, until the demo stops. */
  async run(): Promise<void> {
    let carry = 0;
    while (!this.signal.aborted) {
      const t = this.sources.traffic;
      if (t.enabled && t.ratePerSec > 0) {
        carry += (t.ratePerSec * TICK_MS) / 1000;
        const n = Math.floor(carry);
        carry -= n;
        if (n > 0) await this.publishBatch(n);
      }
      await pause(TICK_MS, this.signal);
    }
  }

  /** Drops the copies not sent yet (the demo stops). */
  stop(): void {
    for (const t of this.timers) clearTimeout(t);
  }

  private async publishBatch(n: number): Promise<void> {
    const msgs = Array.from({ length: n }, () => this.event());
    try {
      await this.publisher.publish(this.topic, ...msgs);
      const f = this.sources.forwarderRepublish;
      if (f.enabled) this.sendLater(this.forwarderCopies(msgs, f.rate), f.delayMs);
      if (this.background) this.sendLater(this.background.retries(msgs), this.background.opts.ackTimeoutMs);
    } catch (e) {
      console.warn(`[demo] publish failed: ${(e as Error).message}`);
      await pause(1000, this.signal);
    }
  }

  /** An event of a handler's type, drawn by the handlers' traffic shares. */
  private event(): Message {
    const r = Math.random();
    let acc = 0;
    let spec = DEMO_HANDLER_SPECS[0]!;
    for (const h of DEMO_HANDLER_SPECS) {
      acc += h.trafficShare;
      if (r < acc) {
        spec = h;
        break;
      }
    }
    const seq = this.seq++;
    const payload = JSON.stringify({ seq, userId: `u${seq % 97}`, at: new Date().toISOString() });
    return {
      uuid: ulid(),
      metadata: { [EVENT_TYPE_KEY]: spec.eventType, [CORRELATION_ID_KEY]: ulid() },
      payload: Buffer.from(payload),
      signal: this.signal,
      context: {},
    };
  }

  /** (c) The forwarder re-publishes `rate` of the messages with the same UUID. */
  private forwarderCopies(msgs: readonly Message[], rate: number): Message[] {
    return msgs
      .filter(() => Math.random() < rate)
      .map((m) => ({ ...m, metadata: { ...m.metadata, "Forwarder-Republish": "1" }, context: {} }));
  }

  /** Publishes `copies` after `delayMs`, unless the demo stopped by then. */
  private sendLater(copies: readonly Message[], delayMs: number): void {
    if (copies.length === 0) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.signal.aborted) this.publisher.publish(this.topic, ...copies).catch(() => undefined);
    }, delayMs);
    this.timers.add(t);
  }
}
