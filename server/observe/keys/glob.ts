/**
 * Redis glob helpers: escape user input so it matches literally, match keys against the configured
 * `DEDUP_PREFIXES` globs in Node, translate globs to Lua patterns for the inspector scripts, and
 * split a key into service / handler / prefix.
 *
 * Redis glob syntax (stringmatchlen): `*`, `?`, `[abc]`, `[^a]`/`[!a]`, `[a-z]`, and `\x` for a
 * literal `x`.
 */
import { DEDUP_KEY_SEGMENT, dedupKeyPrefix } from "@/names/keys";

const GLOB_SPECIAL = /[*?[\]\\^]/g;

/** Escapes every glob character of `s` so that a Redis `MATCH` treats it literally. */
export function escapeGlob(s: string): string {
  return s.replace(GLOB_SPECIAL, (c) => `\\${c}`);
}

interface GlobToken {
  kind: "star" | "any" | "set" | "char";
  /** For `char`: the character. For `set`: negated flag and the items (chars or ranges). */
  ch?: string;
  negate?: boolean;
  items?: Array<[string, string]>;
}

function tokenize(glob: string): GlobToken[] {
  const out: GlobToken[] = [];
  const chars = Array.from(glob);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "*") out.push({ kind: "star" });
    else if (c === "?") out.push({ kind: "any" });
    else if (c === "\\" && i + 1 < chars.length) out.push({ kind: "char", ch: chars[++i]! });
    else if (c === "[") {
      let j = i + 1;
      let negate = false;
      if (chars[j] === "^" || chars[j] === "!") {
        negate = true;
        j++;
      }
      const items: Array<[string, string]> = [];
      while (j < chars.length && chars[j] !== "]") {
        let a = chars[j]!;
        if (a === "\\" && j + 1 < chars.length) a = chars[++j]!;
        if (chars[j + 1] === "-" && j + 2 < chars.length && chars[j + 2] !== "]") {
          let b = chars[j + 2]!;
          j += 2;
          if (b === "\\" && j + 1 < chars.length) b = chars[++j]!;
          items.push(a <= b ? [a, b] : [b, a]);
        } else items.push([a, a]);
        j++;
      }
      if (j >= chars.length) {
        // Unterminated set: Redis treats the rest as the set; we treat `[` literally instead, which
        // can only make the match narrower (safe for confinement).
        out.push({ kind: "char", ch: "[" });
        continue;
      }
      out.push({ kind: "set", negate, items });
      i = j;
    } else out.push({ kind: "char", ch: c });
  }
  return out;
}

const RE_SPECIAL = /[.*+?^${}()|[\]\\/-]/g;
// Outside a character class a `-` is literal, and `\-` is a syntax error under the `u` flag.
const RE_SPECIAL_OUTSIDE_SET = /[.*+?^${}()|[\]\\/]/g;

/** A RegExp matching exactly the keys the Redis glob matches (anchored). */
export function globToRegExp(glob: string): RegExp {
  let src = "";
  for (const t of tokenize(glob)) {
    if (t.kind === "star") src += "[\\s\\S]*";
    else if (t.kind === "any") src += "[\\s\\S]";
    else if (t.kind === "char") src += t.ch!.replace(RE_SPECIAL_OUTSIDE_SET, "\\$&");
    else {
      const body = t
        .items!.map(([a, b]) =>
          a === b ? a.replace(RE_SPECIAL, "\\$&") : `${a.replace(RE_SPECIAL, "\\$&")}-${b.replace(RE_SPECIAL, "\\$&")}`,
        )
        .join("");
      src += body === "" ? (t.negate ? "[\\s\\S]" : "(?!)") : `[${t.negate ? "^" : ""}${body}]`;
    }
  }
  return new RegExp(`^${src}$`, "u");
}

const LUA_MAGIC = /[\^$()%.[\]*+\-?]/g;

/**
 * A Lua pattern (for `string.find(key, pat)`) matching the same keys as the glob, anchored.
 * Byte-oriented like Redis itself; a set with non-ASCII members degrades to "any byte", which
 * only widens the Lua-side match — the Node side re-checks every key it returns with
 * {@link globToRegExp}. A leading or trailing `*` drops its anchor instead of becoming `.-`
 * (`*:dedup:*` → `:dedup:`): the same keys, without a lazy scan to the end of every key.
 */
export function globToLuaPattern(glob: string): string {
  const tokens = tokenize(glob);
  const lead = tokens[0]?.kind === "star";
  const trail = tokens.length > 1 && tokens[tokens.length - 1]?.kind === "star";
  const inner = globToAnchoredLua(tokens.slice(lead ? 1 : 0, trail ? -1 : undefined));
  return `${lead ? "" : "^"}${inner}${trail || (lead && tokens.length === 1) ? "" : "$"}`;
}

function globToAnchoredLua(tokens: ReturnType<typeof tokenize>): string {
  let src = "";
  for (const t of tokens) {
    if (t.kind === "star") src += ".-";
    else if (t.kind === "any") src += ".";
    else if (t.kind === "char") src += luaLiteral(t.ch!);
    else {
      const ascii = t.items!.every(([a, b]) => a.charCodeAt(0) < 128 && b.charCodeAt(0) < 128);
      if (!ascii || t.items!.length === 0) src += ".";
      else {
        const body = t
          .items!.map(([a, b]) =>
            a === b ? a.replace(LUA_MAGIC, "%$&") : `${a.replace(LUA_MAGIC, "%$&")}-${b.replace(LUA_MAGIC, "%$&")}`,
          )
          .join("");
        src += `[${t.negate ? "^" : ""}${body}]`;
      }
    }
  }
  return src;
}

function luaLiteral(ch: string): string {
  // Multi-byte characters are literal byte sequences in Lua; only ASCII magic needs escaping.
  return ch.replace(LUA_MAGIC, "%$&");
}

/** Compiled set of configured globs: match keys in Node. */
export class PrefixGlobs {
  readonly globs: readonly string[];
  private readonly res: RegExp[];
  constructor(globs: readonly string[]) {
    if (globs.length === 0) throw new RangeError("prefixes: expected at least one glob such as *:dedup:*");
    this.globs = globs;
    this.res = globs.map(globToRegExp);
  }
  /** Whether `key` falls under one of the configured globs. */
  matches(key: string): boolean {
    return this.res.some((r) => r.test(key));
  }
  /** Lua patterns of the globs, for the inspector scripts. */
  luaPatterns(): string[] {
    return this.globs.map(globToLuaPattern);
  }
}

/** Where a key belongs: its service, its handler and the literal prefix (key minus its last segment). */
export interface KeyOwner {
  service: string;
  handler: string;
  prefix: string;
}

/**
 * Splits a handler prefix (`<service>:dedup:<handler>`, spec §2) into service and handler. For
 * other layouts (a team's own globs) the first segment is the service and the rest the handler.
 */
export function splitPrefix(prefix: string): KeyOwner {
  const segs = prefix.split(":");
  const at = segs.indexOf(DEDUP_KEY_SEGMENT, 1);
  if (at >= 1) {
    return { service: segs.slice(0, at).join(":"), handler: segs.slice(at + 1).join(":") || "(none)", prefix };
  }
  return { service: segs[0] ?? "", handler: segs.slice(1).join(":") || "(none)", prefix };
}

/** The prefix of a key: everything before its last `:` (the key itself when it has none). */
export function prefixOfKey(key: string): string {
  const i = key.lastIndexOf(":");
  return i < 0 ? key : key.slice(0, i);
}

/** The canonical handler prefix `<service>:dedup:<handler>` of spec §2 (the library's `dedupKeyPrefix`). */
export const handlerPrefix = dedupKeyPrefix;
