/** bench:memory's arguments and the setups it measures. */
import type { Marking } from "@/server/dedup";
import { arg } from "../../lib/args";

export const KEYS = Number(arg("keys", "500000"));
export const BATCH = Number(arg("batch", "1000"));
export const SERVICE = arg("service", "billing");
export const HANDLER = arg("handler", "charge");
export const JSON_PATH = arg("json", "");
export const TOPIC = arg("topic", "demo.events");
if (!Number.isInteger(KEYS) || KEYS < 1000 || KEYS > 5_000_000)
  throw new RangeError("bench-memory: --keys must be an integer in [1000, 5000000]");
if (!Number.isInteger(BATCH) || BATCH < 1 || BATCH > 10_000)
  throw new RangeError("bench-memory: --batch must be an integer in [1, 10000]");
if (!/^[^\s:]+$/.test(SERVICE) || !/^[^\s:]+$/.test(HANDLER))
  throw new RangeError("bench-memory: --service and --handler must be non-empty without spaces or ':'");

/** One measured setup: a marking, with or without delivery positions in the messages. */
export interface Variant {
  name: string;
  marking: Marking;
  position: boolean;
}
export const VARIANTS: Variant[] = [
  { name: "lease", marking: "lease", position: false },
  { name: "lease+position", marking: "lease", position: true },
  { name: "release", marking: "release", position: false },
  { name: "naive", marking: "naive", position: false },
];
export const PARTITIONS = 6;
/** First offset of each partition: 7 digits, a long-running topic's order of magnitude. */
export const OFFSET_BASE = 1_000_000;
export const TTL_MS = 24 * 3600_000;
