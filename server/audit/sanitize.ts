/**
 * What the audit trail stores is cleaned before it is stored: NUL and other control characters
 * (PostgreSQL's `jsonb` and `text` refuse `\u0000`; newlines forge lines in logs and exports) and
 * unpaired surrogates become U+FFFD, strings are cut, lists and objects bounded. A value any
 * client can send can then never make its own action's entry unwritable.
 */

/** Longest string kept (the rest is cut and `…` appended). */
export const AUDIT_MAX_STRING = 1000;
/** Most items of a list kept (then one `… N more` item). */
export const AUDIT_MAX_ITEMS = 100;
/** Most keys of an object kept. */
export const AUDIT_MAX_KEYS = 50;
/** Deepest nesting kept (deeper values become their JSON text, cut). */
export const AUDIT_MAX_DEPTH = 6;

// eslint-disable-next-line no-control-regex
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` without control characters or unpaired surrogates (each one U+FFFD), at most `max` characters. */
export function auditText(s: string, max: number = AUDIT_MAX_STRING): string {
  const clean = s.replace(UNSAFE, "\ufffd");
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** A JSON-like value with every string {@link auditText}-cleaned and every list and object bounded. */
export function auditValue(v: unknown, depth = 0): unknown {
  if (typeof v === "string") return auditText(v);
  if (v === null || typeof v === "number" || typeof v === "boolean") return v;
  if (typeof v === "bigint") return v.toString();
  if (typeof v !== "object") return v === undefined ? undefined : auditText(String(v));
  if (depth >= AUDIT_MAX_DEPTH) return auditText(JSON.stringify(v) ?? "");
  if (Array.isArray(v)) {
    const kept = v.slice(0, AUDIT_MAX_ITEMS).map((x) => auditValue(x, depth + 1));
    return v.length > AUDIT_MAX_ITEMS ? [...kept, `… ${v.length - AUDIT_MAX_ITEMS} more`] : kept;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v).slice(0, AUDIT_MAX_KEYS)) out[auditText(k, 200)] = auditValue(x, depth + 1);
  return out;
}

/** {@link auditValue} of a record (the entry's `filter`, `scope`, `touched`, `principal`). */
export function auditRecord<T extends object>(v: T): T {
  return auditValue(v) as T;
}
