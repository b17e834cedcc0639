/**
 * What each piece of a handler's hot path costs, in CPU µs per message, for `npm run bench:dedup`:
 * single deliveries through `Router.sink(h).deliver` with the in-memory repository (lease marking,
 * metrics on), so the figures are the library's own CPU and not a store's round trip.
 *
 * Variants, each measured in every round (interleaved, so a shared machine's changing load hits all
 * of them alike), median over rounds of the difference to the variant it adds to:
 *   router         the bare Router and a no-op handler (the reference of the others)
 *   dedup          + the Deduplicator, empty payload
 *   dedup 256 B    the same with a 256-byte payload (its SHA-256 fingerprint is the difference)
 *   fields 256 B   the same with `fingerprint: { exclude: ["/sentAt"] }`: the payload read as JSON and
 *                  written canonically before its hash (the difference to `dedup 256 B`)
 *   timer          + `handlerTimer` (`handler_execution_time_seconds`)
 *   timeout        + `timeout(30 s)` (one timer per attempt; opt-in)
 *   produced       + the handler returns one message, published by a no-op publisher inside the stack
 *   defaultStack   the whole `defaultStack` (correlationId … Deduplicator, handlerTimer), 256 B
 *   router batch   the bare Router, messages delivered as batches of 500 (`deliverBatch`, as the
 *                  Kafka subscriber does), each message at its own offset
 *   defaultStack batch  the whole `defaultStack` on such batches, 256 B: the stack's batch form
 *                  (pre-claims in one call, done marks in one call at the batch's settle)
 * and the payload fingerprint alone (`payloadFingerprint`) per payload size.
 */
import { Registry } from "prom-client";
import {
  Deduplicator,
  payloadFingerprint,
  handlerTimer,
  MemoryRepository,
  newMessage,
  type Handler,
  type Message,
  type Middleware,
  MemoryPubSub,
  type Publisher,
  Router,
  defaultStack,
  timeout,
} from "../../server/dedup";
import { median } from "../lib/stats";

const PAYLOAD_256 = JSON.stringify({
  type: "review.created",
  reviewId: 1234567,
  userId: 7654321,
  text: "x".repeat(190),
})
  .padEnd(256, " ")
  .slice(0, 256);
const noopPublisher: Publisher = { publish: async () => undefined, close: async () => undefined };

interface Variant {
  name: string;
  /** The variant whose cost this one adds to (its figure is the difference); none for the reference. */
  base?: string;
  payload: string;
  stack: (registry: Registry) => Middleware[];
  produces?: boolean;
  /** Delivered as Router batches of this size instead of one by one. */
  batch?: number;
}

const dedup = (registry: Registry) =>
  new Deduplicator({ repository: new MemoryRepository(), service: "hot", registry }).middleware;
const dedupFields = (registry: Registry) =>
  new Deduplicator({
    repository: new MemoryRepository(),
    service: "hot",
    registry,
    fingerprint: { exclude: ["/sentAt"] },
  }).middleware;
const timer = (registry: Registry) => handlerTimer({ registry, service: "hot" });
const wholeStack = (registry: Registry) =>
  defaultStack({
    dlqPublisher: noopPublisher,
    dlqTopic: "hot.dlq",
    dedup: { repository: new MemoryRepository(), service: "hot", registry, logger: () => undefined },
  });

/** The variants, each building on the one before it (see the module doc). */
export const VARIANTS: readonly Variant[] = [
  { name: "router", payload: "", stack: () => [] },
  { name: "dedup", base: "router", payload: "", stack: (r) => [dedup(r)] },
  { name: "dedup 256 B", base: "dedup", payload: PAYLOAD_256, stack: (r) => [dedup(r)] },
  { name: "fields 256 B", base: "dedup 256 B", payload: PAYLOAD_256, stack: (r) => [dedupFields(r)] },
  { name: "timer", base: "dedup 256 B", payload: PAYLOAD_256, stack: (r) => [dedup(r), timer(r)] },
  { name: "timeout", base: "timer", payload: PAYLOAD_256, stack: (r) => [dedup(r), timeout(30_000), timer(r)] },
  { name: "produced", base: "timer", payload: PAYLOAD_256, stack: (r) => [dedup(r), timer(r)], produces: true },
  { name: "defaultStack", base: "router", payload: PAYLOAD_256, stack: wholeStack },
  { name: "router batch", payload: "", stack: () => [], batch: 500 },
  { name: "defaultStack batch", base: "router batch", payload: PAYLOAD_256, stack: wholeStack, batch: 500 },
];

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** CPU µs per message of `n` single deliveries of variant `v` (fresh Router, repository and registry). */
async function cpuPerMessage(v: Variant, n: number, tag: string): Promise<number> {
  const output = newMessage("out", "{}");
  const handler: Handler = v.produces ? async () => [output] : async () => undefined;
  const router = new Router({ onError: (e) => console.error(e.error) });
  router.addHandler({
    name: "h",
    topic: "hot",
    subscriber: new MemoryPubSub(),
    handler,
    middleware: v.stack(new Registry()),
    ...(v.produces ? { publisher: noopPublisher, publishTopic: "hot.out" } : {}),
  });
  const sink = router.sink("h");
  const msgs: Message[] = Array.from({ length: n }, (_, i) => newMessage(`${tag}-${i}`, v.payload));
  if (v.batch)
    for (let i = 0; i < n; i++) Object.assign(msgs[i]!.context, { topic: "hot", partition: 0, offset: String(i) });
  const c0 = cpuNow();
  if (v.batch) {
    for (let i = 0; i < n; i += v.batch) {
      const out = await sink.deliverBatch(msgs.slice(i, i + v.batch));
      if (out.length !== Math.min(v.batch, n - i) || out.some((o) => o !== "ack"))
        throw new Error(`hot path ${v.name}: a batch was not acked in full`);
    }
    await sink.flush?.();
  } else
    for (const m of msgs)
      if ((await sink.deliver(m)) !== "ack") throw new Error(`hot path ${v.name}: a delivery was not acked`);
  return (cpuNow() - c0) / n;
}

/** `payloadFingerprint` alone: CPU µs per call for each payload size in bytes. */
function fingerprintUs(sizes: readonly number[], n: number): Record<number, number> {
  const out: Record<number, number> = {};
  for (const size of sizes) {
    const payload = Buffer.alloc(size, 97);
    for (let i = 0; i < 20_000; i++) payloadFingerprint(payload);
    const rounds: number[] = [];
    for (let r = 0; r < 5; r++) {
      const c0 = cpuNow();
      for (let i = 0; i < n; i++) payloadFingerprint(payload);
      rounds.push((cpuNow() - c0) / n);
    }
    out[size] = median(rounds);
  }
  return out;
}

/** Every variant's median CPU µs/msg and its added cost over its base, plus the fingerprint alone. */
export async function hotPathCosts(
  n = 50_000,
  rounds = 7,
): Promise<{ absolute: Record<string, number>; added: Record<string, number>; fingerprint: Record<number, number> }> {
  const samples: Record<string, number[]> = Object.fromEntries(VARIANTS.map((v) => [v.name, []]));
  for (let r = -1; r < rounds; r++) {
    // Round -1 warms the JIT up and is not recorded.
    const m = r < 0 ? Math.min(n, 10_000) : n;
    const got: Record<string, number> = {};
    for (const v of VARIANTS) got[v.name] = await cpuPerMessage(v, m, `hot${r}${v.name}`);
    if (r >= 0) for (const v of VARIANTS) samples[v.name]!.push(got[v.name]!);
  }
  const absolute: Record<string, number> = {};
  const added: Record<string, number> = {};
  for (const v of VARIANTS) {
    const s = samples[v.name]!;
    absolute[v.name] = median(s);
    // Median of the per-round differences: both sides of a difference ran back to back.
    if (v.base) added[v.name] = median(s.map((x, i) => x - samples[v.base!]![i]!));
  }
  return { absolute, added, fingerprint: fingerprintUs([0, 256, 1024, 4096], 200_000) };
}
