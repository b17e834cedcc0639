/** bench:dedup's arguments and the names of this run (a random tag, so its keys are its own). */
import { arg, flag } from "../../lib/args";
import type { Marking } from "@/server/dedup";

/** Claims per measured mode (`--n`). */
export const N = Number(arg("n", "50000"));
export const BATCH = Number(arg("batch", "1000"));
export const CONCURRENCY = Number(arg("concurrency", "512"));
/** Messages per variant and round of the inbox's cost (`--inbox-messages`). */
export const INBOX_MESSAGES = Number(arg("inbox-messages", "2000"));
export const REDIS_URL = arg("redis", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
export const JSON_PATH = flag("json") ? arg("json", "") : "";
for (const [k, v] of Object.entries({
  n: N,
  batch: BATCH,
  concurrency: CONCURRENCY,
  "inbox-messages": INBOX_MESSAGES,
})) {
  if (!Number.isInteger(v) || v < 1 || v > 10_000_000)
    throw new RangeError(`bench-dedup: --${k} must be an integer in [1, 10000000]`);
}
export const url = new URL(REDIS_URL);
export const MARKINGS: Marking[] = ["lease", "release", "naive"];
export const run = `bench${Math.random().toString(36).slice(2, 8)}`;
