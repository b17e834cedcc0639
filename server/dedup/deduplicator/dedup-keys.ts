/**
 * A Deduplicator's repository keys: `<prefix>:<keyFactory(msg)>`, the prefix `<service>:dedup:<handler>`
 * (spec §2) unless the options set one.
 */
import type { Message } from "../message";
import { dedupKeyPrefix } from "../../../names/keys";
import type { ResolvedDeduplicatorOptions } from "./deduplicator-options";

/** The keys of one Deduplicator's messages, with its per-handler prefixes computed once. */
export class DedupKeys {
  private readonly prefixes = new Map<string, string>();

  constructor(private readonly options: Pick<ResolvedDeduplicatorOptions, "keyFactory" | "prefix" | "service">) {}

  /** The full repository key of `msg`: `<prefix>:<keyFactory(msg)>`. Throws what the key factory throws. */
  keyOf(msg: Message): string {
    const k = this.options.keyFactory(msg);
    if (typeof k !== "string" || k === "") throw new Error("keyFactory returned an empty or non-string key");
    return `${this.prefixOf(msg)}:${k}`;
  }

  /** The key prefix for a message's handler: `<service>:dedup:<handler>` (spec §2). */
  prefixOf(msg: Message): string {
    if (this.options.prefix) return this.options.prefix;
    const handler = msg.context.handler ?? "default";
    let p = this.prefixes.get(handler);
    if (p === undefined) {
      p = dedupKeyPrefix(this.options.service, handler);
      this.prefixes.set(handler, p);
    }
    return p;
  }
}
