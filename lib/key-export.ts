/**
 * A page of the key browser sorted and exported (CSV, JSON) — pure functions the page calls.
 */
import type { KeyEntry } from "@/lib/api/keys";

/** How a page can be sorted: the order the store gave it in (SCAN order in Redis), by TTL left or by size, largest first. */
export type KeySort = "scan" | "ttl" | "size";

/** The page's keys in `sort` order (a copy). No TTL (-1) sorts as the longest; unknown values last. */
export function sortKeys<T extends KeyEntry>(keys: readonly T[], sort: KeySort): T[] {
  if (sort === "scan") return [...keys];
  const v = (k: KeyEntry) =>
    sort === "ttl" ? (k.ttlMs === -1 ? Infinity : (k.ttlMs ?? -Infinity)) : (k.bytes ?? -Infinity);
  return [...keys].sort((a, b) => v(b) - v(a));
}

const CSV_COLUMNS = [
  "key",
  "uuid",
  "state",
  "ttlMs",
  "bytes",
  "recordTopic",
  "recordPartition",
  "recordOffset",
] as const;

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? "" : String(v);
  // Quote what needs it, and defuse spreadsheet formulas in text (a key may start with = + - @); numbers stay numbers.
  const safe = typeof v === "string" && /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The keys as CSV (header line, one key per line). */
export function keysToCsv(keys: readonly KeyEntry[]): string {
  const rows = keys.map((k) =>
    [k.key, k.uuid, k.state, k.ttlMs, k.bytes, k.record?.topic, k.record?.partition, k.record?.offset]
      .map(csvCell)
      .join(","),
  );
  return [CSV_COLUMNS.join(","), ...rows].join("\n") + "\n";
}

/** The keys as pretty JSON. */
export function keysToJson(keys: readonly KeyEntry[]): string {
  return JSON.stringify(keys, null, 2) + "\n";
}
