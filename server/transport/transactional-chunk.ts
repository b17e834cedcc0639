/**
 * How the partition pump settles a chunk in the Kafka-transactions mode (kafka-transactions.ts):
 * begin → the chunk's deliveries with the transaction current (their produced messages go into it)
 * → every message acked: the consumed offset joins it and it commits; anything else (a nack, a
 * failed send or commit, a fenced producer) aborts it and the whole chunk is read again — its
 * outputs were never visible to a `read_committed` reader, so running it again duplicates nothing.
 */
import type { Message, Outcome } from "@/server/dedup";
import type { ChunkBegin } from "./kafka-transactions";
import type { BeforeCommit } from "./subscriber-options";

/** What of a partition run (partition-pump.ts's `PartitionRun`) a transacted chunk uses. */
export interface TransactedRun {
  options: { nackDelayMs: number; beforeCommit?: BeforeCommit };
  /** Begins the transaction of a chunk starting at `first`. */
  transaction?: (first: string) => Promise<ChunkBegin>;
  ack: (offset: string) => void | Promise<void>;
  redeliver: (offset: string) => void;
  onCrash: () => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The offset after `offset`: what a commit records as the next one to read. */
const after = (offset: string) => (BigInt(offset) + 1n).toString();

/**
 * Runs `chunk` (through `deliver`) in one transaction of `run.transaction`. True when it committed
 * and the run goes on; false when the run ends (a redelivery was asked for, or the replica crashed).
 */
export async function transactChunk(
  run: TransactedRun,
  chunk: readonly Message[],
  deliver: () => Promise<Outcome[]>,
): Promise<boolean> {
  const first = chunk[0]!.context.offset!;
  const last = chunk[chunk.length - 1]!.context.offset!;
  const retry = async () => {
    if (run.options.nackDelayMs > 0) await sleep(run.options.nackDelayMs);
    run.redeliver(first);
    return false;
  };
  let begun;
  try {
    begun = await run.transaction!(first);
  } catch {
    return retry();
  }
  if ("committedAt" in begun) {
    // A previous owner committed past this chunk's start after this member read the offsets.
    run.redeliver(begun.committedAt);
    return false;
  }
  const { tx } = begun;
  let outcomes: Outcome[];
  try {
    outcomes = await tx.run(deliver);
  } catch (e) {
    await tx.abort().catch(() => undefined);
    throw e;
  }
  if (outcomes.length < chunk.length || outcomes.some((o) => o !== "ack")) {
    await tx.abort().catch(() => undefined);
    return retry();
  }
  if (run.options.beforeCommit && run.options.beforeCommit(chunk) === "crash") {
    run.onCrash(); // left open: the broker (or the partition's next owner) aborts it
    return false;
  }
  try {
    await tx.commit(after(last));
  } catch {
    await tx.abort().catch(() => undefined);
    return retry();
  }
  await run.ack(last);
  return true;
}

/** Commits the offset after `offset` alone in a transaction (a skipped unreadable record). False when the run ends. */
export async function transactOffset(run: TransactedRun, offset: string): Promise<boolean> {
  try {
    const begun = await run.transaction!(offset);
    if ("committedAt" in begun) {
      run.redeliver(begun.committedAt);
      return false;
    }
    await begun.tx.commit(after(offset));
  } catch {
    if (run.options.nackDelayMs > 0) await sleep(run.options.nackDelayMs);
    run.redeliver(offset);
    return false;
  }
  await run.ack(offset);
  return true;
}
