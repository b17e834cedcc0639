/**
 * Payload masking: applies `MASK_RULES` to a record read from the log before any answer is built
 * from it, for a caller without the `unmasked` permission (server/auth/principal.ts). A rule names
 * a topic (its DLQ topic included; `*`: every topic) and a JSON pointer into the payload or a
 * header name; `MASK` keeps the key with {@link MASK_MARKER}, `REMOVE` drops it. What was masked is
 * listed in the answer ({@link MaskedNote}). Only the copy in the answer changes: the log is
 * never written.
 *
 * **A payload that is not JSON on a topic with pointer rules is masked whole**: a pointer that
 * cannot be followed must not let the field through.
 */
import { MASK_MARKER, type MaskAction, type MaskRule, type MaskedNote } from "@/lib/api/masking";
import { dlqTopicOf } from "@/names/dlq";
import type { RawRecord } from "./log-reader";

/** A record as one caller may see it, and what was masked (`null`: the caller sees it unmasked). */
export interface MaskedRecord {
  record: RawRecord;
  masked: MaskedNote[] | null;
}

/** Turns a record into what the caller may see. */
export type Masker = (r: RawRecord) => MaskedRecord;

/** The masker of a caller who sees every payload whole. */
export const UNMASKED: Masker = (record) => ({ record, masked: null });

/** The rules that apply to `topic`: those naming it, its origin topic (a DLQ topic) or `*`. */
export function rulesFor(rules: readonly MaskRule[], topic: string): MaskRule[] {
  return rules.filter((r) => r.topic === "*" || r.topic === topic || dlqTopicOf(r.topic) === topic);
}

/** The segments of a JSON pointer (RFC 6901), unescaped: `/a~1b/0` → `["a/b", "0"]`. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

const REMOVED = Symbol("removed");
type Json = unknown;

/** The keys (object) or indices (array) a segment selects in `node`; `*` selects them all. */
function selected(node: object, seg: string): string[] {
  if (Array.isArray(node)) {
    if (seg === "*") return node.map((_, i) => String(i));
    return /^(0|[1-9]\d*)$/.test(seg) && Number(seg) < node.length ? [seg] : [];
  }
  if (seg === "*") return Object.keys(node);
  return Object.hasOwn(node, seg) ? [seg] : [];
}

/** Applies one pointer rule below `node` (mutated); returns the node's replacement and whether anything matched. */
function applyAt(
  node: Json,
  segs: readonly string[],
  action: MaskAction,
): { value: Json | typeof REMOVED; hit: boolean } {
  if (segs.length === 0) return { value: action === "MASK" ? MASK_MARKER : REMOVED, hit: true };
  if (typeof node !== "object" || node === null) return { value: node, hit: false };
  const [seg, ...rest] = segs as [string, ...string[]];
  const rec = node as Record<string, Json>;
  let hit = false;
  const drop = new Set<string>();
  for (const k of selected(node, seg)) {
    const r = applyAt(rec[k], rest, action);
    hit ||= r.hit;
    if (r.value === REMOVED) drop.add(k);
    else rec[k] = r.value;
  }
  if (drop.size === 0) return { value: node, hit };
  // Removed array elements leave after the walk, so the indices selected above stay valid.
  if (Array.isArray(node)) return { value: node.filter((_, i) => !drop.has(String(i))), hit };
  for (const k of drop) delete rec[k];
  return { value: node, hit };
}

/**
 * Applies pointer rules to a parsed JSON document (mutated in place); returns the document (or
 * `undefined` when the whole of it was removed) and the pointers that matched something. A
 * missing path matches nothing.
 */
export function maskJson(
  doc: Json,
  rules: ReadonlyArray<{ pointer: string; action: MaskAction }>,
): { doc: Json | undefined; hits: string[] } {
  let cur: Json | typeof REMOVED = doc;
  const hits: string[] = [];
  for (const rule of rules) {
    if (cur === REMOVED) break;
    const r = applyAt(cur, pointerSegments(rule.pointer), rule.action);
    if (r.hit) hits.push(rule.pointer);
    cur = r.value;
  }
  return { doc: cur === REMOVED ? undefined : cur, hits };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The payload's JSON, or `undefined` when it is not valid UTF-8 JSON. */
function parseJson(value: Buffer): Json | undefined {
  try {
    return JSON.parse(utf8.decode(value)) as Json;
  } catch {
    return undefined;
  }
}

/** The payload with pointer rules applied, and what was masked. */
function maskPayload(value: Buffer | null, rules: readonly MaskRule[]): { value: Buffer | null; notes: MaskedNote[] } {
  const pointerRules = rules.flatMap((r) =>
    r.pointer === undefined ? [] : [{ pointer: r.pointer, action: r.action }],
  );
  if (value === null || pointerRules.length === 0) return { value, notes: [] };
  const doc = parseJson(value);
  if (doc === undefined) {
    // Not JSON: no pointer can be followed, so nothing of it is shown.
    const first = pointerRules[0]!;
    return {
      value: Buffer.from(MASK_MARKER),
      notes: [{ in: "payload", field: first.pointer, action: "MASK", whole: true }],
    };
  }
  const { doc: out, hits } = maskJson(doc, pointerRules);
  const notes = pointerRules
    .filter((r) => hits.includes(r.pointer))
    .map((r): MaskedNote => ({
      in: "payload",
      field: r.pointer,
      action: r.action,
      ...(r.pointer === "" ? { whole: true } : {}),
    }));
  if (hits.length === 0) return { value, notes };
  return { value: out === undefined ? null : Buffer.from(JSON.stringify(out)), notes };
}

/** The headers with header rules applied (names compared case-insensitively), and what was masked. */
function maskHeaders(
  headers: RawRecord["headers"],
  rules: readonly MaskRule[],
): { headers: RawRecord["headers"]; notes: MaskedNote[] } {
  const out: RawRecord["headers"] = {};
  const notes: MaskedNote[] = [];
  for (const [key, v] of Object.entries(headers)) {
    const rule = rules.find((r) => r.header !== undefined && r.header.toLowerCase() === key.toLowerCase());
    if (!rule || v === undefined) {
      out[key] = v;
      continue;
    }
    notes.push({ in: "header", field: key, action: rule.action });
    if (rule.action === "MASK") out[key] = Array.isArray(v) ? v.map(() => MASK_MARKER) : MASK_MARKER;
  }
  return { headers: out, notes };
}

/** Applies the rules of the record's topic to a copy of it. */
export function maskRecord(r: RawRecord, rules: readonly MaskRule[]): MaskedRecord {
  const mine = rulesFor(rules, r.topic);
  const p = maskPayload(r.value, mine);
  const h = maskHeaders(r.headers, mine);
  return { record: { ...r, value: p.value, headers: h.headers }, masked: [...p.notes, ...h.notes] };
}

/**
 * The masker of one caller: records of a topic whose payloads `unmasked(topic)` allows pass
 * whole, others are masked by `rules`.
 */
export function maskerOf(rules: readonly MaskRule[], unmasked: (topic: string) => boolean): Masker {
  if (rules.length === 0) return UNMASKED;
  return (r) => (unmasked(r.topic) ? { record: r, masked: null } : maskRecord(r, rules));
}

/** Whether the masking touched the header `name` (the caller cannot search or filter by it). */
export function hidesHeader(m: MaskedRecord, name: string): boolean {
  return m.masked?.some((n) => n.in === "header" && n.field.toLowerCase() === name.toLowerCase()) ?? false;
}
