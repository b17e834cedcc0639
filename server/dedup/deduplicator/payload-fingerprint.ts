/**
 * The payload fingerprint of a handler: over the payload's bytes (the default), or over the fields
 * it chose (`fingerprint: { include, exclude }`) of the payload read as JSON and written canonically
 * (sorted keys), so a producer retry that re-serialises the event with a new `sentAt`, another key
 * order or other whitespace is a repeat, not a payload conflict.
 * Internal to the Deduplicator.
 */
import { PAYLOAD_DIFFERENCE, type PayloadDifference } from "../../../names/dedup";
import { payloadFingerprint } from "../repository/stored-value";

/**
 * A JSON Pointer (RFC 6901): `""` is the whole document, `"/order/total"` a member, `"/items/0"` an
 * array element; `~1` stands for `/` and `~0` for `~` inside a name.
 */
export type JsonPointer = string;

/** Which fields of a JSON payload make its fingerprint ({@link DeduplicatorOptions.fingerprint}). */
export interface FingerprintOptions {
  /** Only these fields count (a missing one counts as missing). @default the whole document */
  include?: readonly JsonPointer[];
  /** These fields never count (removed before `include` selects). @default none */
  exclude?: readonly JsonPointer[];
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The reference tokens of a pointer (RFC 6901 §3–4); throws a RangeError naming `option` when malformed. */
function tokensOf(pointer: JsonPointer, option: string): string[] {
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/")) || /~[^01]|~$/.test(pointer))
    throw new RangeError(
      `deduplicator: ${option} must hold JSON Pointers (RFC 6901: "" or "/a/b", ~0 for ~ and ~1 for /), got ${JSON.stringify(pointer)}`,
    );
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The container a token indexes, and the index (undefined when the token names nothing there). */
function step(node: unknown, token: string): { parent: object; at: string | number } | undefined {
  if (Array.isArray(node))
    return /^(0|[1-9]\d*)$/.test(token) && +token < node.length ? { parent: node, at: +token } : undefined;
  if (node !== null && typeof node === "object" && Object.hasOwn(node, token)) return { parent: node, at: token };
  return undefined;
}

/** The value `tokens` point at in `doc`, or undefined. */
function get(doc: unknown, tokens: readonly string[]): unknown {
  let node = doc;
  for (const t of tokens) {
    const s = step(node, t);
    if (!s) return undefined;
    node = (s.parent as Record<string | number, unknown>)[s.at];
  }
  return node;
}

/** Removes what `tokens` point at from `doc` (an array element is spliced out, as JSON Patch's `remove`). */
function remove(doc: unknown, tokens: readonly string[]): void {
  const last = tokens.at(-1);
  if (last === undefined) return;
  const s = step(get(doc, tokens.slice(0, -1)), last);
  if (!s) return;
  if (Array.isArray(s.parent)) s.parent.splice(s.at as number, 1);
  else delete (s.parent as Record<string, unknown>)[s.at];
}

/** `value` as canonical JSON: object keys sorted (UTF-16 order, as RFC 8785), no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(",")}}`;
}

/** The fingerprints of one Deduplicator's payloads (by its `fingerprint` option). */
export class PayloadFingerprints {
  private readonly include: string[][] | undefined;
  private readonly includeNames: readonly JsonPointer[] = [];
  private readonly exclude: string[][] = [];
  /** True when the handler chose fields (else the fingerprint is the bytes'). */
  readonly chosen: boolean = false;

  /**
   * Throws a RangeError naming the option when a pointer is malformed. `fellBack(handler)` is told
   * of each fingerprint taken over the bytes because the payload is not JSON.
   */
  constructor(
    options: FingerprintOptions | undefined,
    private readonly fellBack: (handler: string) => void = () => undefined,
  ) {
    if (options === undefined) return;
    if (typeof options !== "object" || options === null)
      throw new RangeError("deduplicator: fingerprint must be { include?: JsonPointer[], exclude?: JsonPointer[] }");
    const list = (name: "include" | "exclude") => {
      const v = options[name];
      if (v !== undefined && !Array.isArray(v))
        throw new RangeError(`deduplicator: fingerprint.${name} must be an array of JSON Pointers`);
      return v?.map((p) => tokensOf(p, `fingerprint.${name}`));
    };
    this.include = list("include");
    if (this.include?.length === 0)
      throw new RangeError(
        "deduplicator: fingerprint.include must name at least one field (omit it for the whole document)",
      );
    this.includeNames = options.include ?? [];
    this.exclude = list("exclude") ?? [];
    this.chosen = this.include !== undefined || this.exclude.length > 0;
  }

  /** The canonical JSON of the chosen fields; undefined when none are chosen, null when the payload is not JSON. */
  private project(payload: Uint8Array): string | null | undefined {
    if (!this.chosen) return undefined;
    let doc: unknown;
    try {
      doc = JSON.parse(decoder.decode(payload));
    } catch {
      return null;
    }
    for (const t of this.exclude) remove(doc, t);
    if (!this.include) return canonicalJson(doc);
    const picked: Record<string, unknown> = {};
    this.include.forEach((t, i) => {
      const v = get(doc, t);
      if (v !== undefined) picked[this.includeNames[i]!] = v;
    });
    return canonicalJson(picked);
  }

  /** The fingerprint stored in the `done` value and compared with a later copy's (of `handler`'s message, for the fallback count). */
  of(payload: Uint8Array, handler = "default"): string {
    const canonical = this.project(payload);
    if (canonical === null) this.fellBack(handler);
    return canonical == null ? payloadFingerprint(payload) : payloadFingerprint(Buffer.from(canonical, "utf8"));
  }

  /** What a conflict of this copy compared: the chosen fields, or the bytes (none chosen, or not JSON). */
  compared(payload: Uint8Array): PayloadDifference {
    return this.project(payload) == null ? PAYLOAD_DIFFERENCE.bytes : PAYLOAD_DIFFERENCE.fields;
  }
}
