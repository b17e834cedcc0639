/** What the claim measurements share: the value a marking writes, timing, test messages, cleanup. */
import type { Redis } from "ioredis";
import { CLAIMED_PREFIX, NAIVE_VALUE, PROCESSING_PREFIX, newMessage, type Marking, type Message } from "@/server/dedup";

/** The value a claim of `marking` writes. */
export function valueFor(marking: Marking, i: number): string {
  return marking === "lease"
    ? `${PROCESSING_PREFIX}b${i}`
    : marking === "release"
      ? `${CLAIMED_PREFIX}b${i}`
      : NAIVE_VALUE;
}

/** UNLINKs every key under `prefix`. */
export async function cleanup(client: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = (await client.call("SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", 5000)) as [
      string,
      string[],
    ];
    cursor = next;
    if (keys.length) await client.call("UNLINK", ...keys);
  } while (cursor !== "0");
}

/** `n` messages with distinct ids, as one handler on topic "bench" receives them. */
export function messages(n: number, tag: string): Message[] {
  return Array.from({ length: n }, (_, i) => {
    const m = newMessage(`${tag}-${i}`, "");
    m.context = { handler: "h", topic: "bench" };
    return m;
  });
}

/** Seconds `fn` took (wall). */
export async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}
