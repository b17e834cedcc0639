/**
 * What a `read_committed` consumer sees of one partition, resolved from the records themselves:
 * a transactional record counts once its producer's COMMIT marker follows it, never when an ABORT
 * marker does; a record outside a transaction counts at once.
 *
 * Why not kafkajs's own read_committed filter: kafkajs 2.2.4 (`filterAbortedMessages`) walks the
 * broker's list of aborted transactions assuming it is sorted by each transaction's first offset,
 * but the broker lists them by where they ended. Two producers' transactions aborted out of order
 * — what a crashed consumer's partitions, fenced one by one by their next owners, leave behind —
 * and the earlier one's records reach the application (`kcat -X isolation.level=read_committed`
 * hides them). Markers are in the log whatever the list says.
 */
import type { IHeaders } from "kafkajs";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";

/** A record as kafkajs decodes it, control records included (`Batch.messagesWithinOffset`, kafkajs internals). */
export interface DecodedRecord {
  offset: string;
  key: Buffer | null;
  headers?: IHeaders;
  isControlRecord: boolean;
  batchContext: { producerId: string; inTransaction: boolean };
}

/** A control record's type (its key: version int16, type int16): 0 abort, 1 commit. */
const COMMIT_MARKER = 1;

/** The `_watermill_message_uuid` of a record, if it has one. */
function uuidOf(r: DecodedRecord): string | undefined {
  const h = r.headers?.[WATERMILL_UUID_HEADER];
  const v = Array.isArray(h) ? h[0] : h;
  return v === undefined ? undefined : Buffer.isBuffer(v) ? v.toString("utf8") : String(v);
}

/** One partition's records, fed in offset order, resolved by their transaction markers. */
export class CommittedLog {
  /** UUIDs a read_committed consumer reads, in log order. */
  readonly committed: string[] = [];
  private readonly open = new Map<string, string[]>();

  /** Feeds the next record of the partition (data or control). */
  add(r: DecodedRecord): void {
    const producer = r.batchContext.producerId;
    if (r.isControlRecord) {
      const held = this.open.get(producer) ?? [];
      this.open.delete(producer);
      const type = r.key && r.key.length >= 4 ? r.key.readInt16BE(2) : -1;
      if (type === COMMIT_MARKER) this.committed.push(...held);
      return;
    }
    const id = uuidOf(r);
    if (id === undefined) return;
    if (!r.batchContext.inTransaction) this.committed.push(id);
    else this.open.set(producer, [...(this.open.get(producer) ?? []), id]);
  }

  /** Records of transactions whose marker was not among the records fed: not known to be committed or aborted. */
  get unresolved(): number {
    let n = 0;
    for (const ids of this.open.values()) n += ids.length;
    return n;
  }
}
