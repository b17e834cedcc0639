// @ts-check
/**
 * A regular expression for the `Next-Router-State-Tree` header that Next's renderer can parse: the
 * URI-encoded JSON of a router state tree as next/dist/server/app-render/types.js'
 * `flightRouterStateSchema` describes it (what `parseAndValidateFlightRouterState` asserts after
 * `JSON.parse(decodeURIComponent(header))`; any failure there is a plain 500 on every page).
 * next.config.js rewrites a header that does not match to a 400: Next hides this header from
 * proxy.ts and offers only a `has` pattern to a rewrite, so the shape is checked by pattern.
 *
 * The tree is recursive and a pattern is not, so it is unrolled to {@link ROUTER_STATE_MAX_DEPTH}
 * levels (this app's deepest page is 5: `""` → handlers → [service] → [handler] → `__PAGE__`); a
 * deeper tree is refused. **The pattern is at most as permissive as Next**: every header it accepts
 * decodes (valid percent-encoded UTF-8 only) and parses (JSON strings without raw control
 * characters, valid escapes) to a state Next accepts; it may refuse what Next would take but its
 * client never sends (whitespace, raw non-ASCII). Each structural character may come raw or
 * percent-encoded (Next's client encodes them, `encodeURIComponent`). The grammar is unambiguous
 * (each alternative starts with its own token), so matching stays linear in the header's length.
 * CommonJS so that next.config.js can `require` it; lib/router-state-pattern.d.ts types it.
 */

/** How deep a router state tree the pattern accepts (root = 1). */
const ROUTER_STATE_MAX_DEPTH = 8;

const HEX = "[0-9A-Fa-f]";
/** `%` and one byte given as two hex digits, either case. */
const pct = (/** @type {number} */ byte) => {
  const h = byte.toString(16).toUpperCase().padStart(2, "0");
  const c = (/** @type {string} */ d) => (/[A-F]/.test(d) ? `[${d}${d.toLowerCase()}]` : d);
  return `%${c(h[0] ?? "0")}${c(h[1] ?? "0")}`;
};
const escapeRe = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** `s` with each character raw or percent-encoded (ASCII only). */
const lit = (/** @type {string} */ s) => [...s].map((ch) => `(?:${escapeRe(ch)}|${pct(ch.charCodeAt(0))})`).join("");
/** A percent-encoded byte within [lo, hi] (hex strings of one digit each: the range of one hex position). */
const pctRange = (/** @type {string} */ hi1, /** @type {string} */ lo2) => `%${hi1}${lo2}`;
const CONT = pctRange("[89ABab]", HEX); // a UTF-8 continuation byte, 80-BF

/** Percent-encoded UTF-8 of one code point above ASCII that decodeURIComponent accepts (no overlongs, surrogates or > U+10FFFF). */
const UTF8_MULTI = [
  `%[Cc][2-9A-Fa-f]${CONT}`,
  `%[Dd]${HEX}${CONT}`,
  `%[Ee]0%[ABab]${HEX}${CONT}`,
  `%[Ee][1-9A-Ca-cEFef]${CONT}${CONT}`,
  `%[Ee][Dd]%[89]${HEX}${CONT}`,
  `%[Ff]0%[9ABab]${HEX}${CONT}${CONT}`,
  `%[Ff][1-3]${CONT}${CONT}${CONT}`,
  `%[Ff]4%8${HEX}${CONT}${CONT}`,
].join("|");

/** Percent-encoded ASCII allowed unescaped in a JSON string: not a control character, `"` or `\`. */
const PCT_ASCII = `%(?:2[013-9A-Fa-f]|[3467]${HEX}|5[0-9ABabD-Fd-f])`;
/** Raw printable ASCII but `"`, `%` and `\`. */
const RAW_ASCII = "[\\x20\\x21\\x23\\x24\\x26-\\x5B\\x5D-\\x7E]";
const QUOTE = lit('"');
const BACKSLASH = lit("\\");
/** A JSON escape after its backslash. */
const ESCAPE = `(?:${QUOTE}|${BACKSLASH}|${lit("/")}|[bfnrt]|u${HEX}{4})`;
/** A JSON string, URI-encoded. */
const STR = `${QUOTE}(?:${RAW_ASCII}|${PCT_ASCII}|${UTF8_MULTI}|${BACKSLASH}${ESCAPE})*${QUOTE}`;
const NUM = `-?(?:0|[1-9][0-9]*)(?:${lit(".")}[0-9]+)?(?:[eE](?:${lit("+")}|-)?[0-9]+)?`;
const NULL = lit("null");
const COMMA = lit(",");
const oneOf = (/** @type {string[]} */ words) => `${QUOTE}(?:${words.map(lit).join("|")})${QUOTE}`;

/** A segment: a string, or [param name, cache key, param type, static siblings or null]. */
const DYNAMIC_TYPES = [
  "ci(..)(..)",
  "ci(...)",
  "ci(..)",
  "ci(.)",
  "c",
  "oc",
  "di(..)(..)",
  "di(...)",
  "di(..)",
  "di(.)",
  "d",
];
const SIBLINGS = `(?:${NULL}|${lit("[")}(?:${STR}(?:${COMMA}${STR})*)?${lit("]")})`;
const SEGMENT = `(?:${STR}|${lit("[")}${STR}${COMMA}${STR}${COMMA}${oneOf(DYNAMIC_TYPES)}${COMMA}${SIBLINGS}${lit("]")})`;
/** The optional tail: [url, refresh] or null, the refresh marker or null, a number or null, a string. */
const URL_PAIR = `(?:${NULL}|${lit("[")}${STR}${COMMA}${STR}${lit("]")})`;
const MARKER = `(?:${NULL}|${oneOf(["refetch", "inside-shared-layout", "metadata-only"])})`;
const TAIL = `(?:${COMMA}${URL_PAIR}(?:${COMMA}${MARKER}(?:${COMMA}(?:${NULL}|${NUM})(?:${COMMA}${STR})?)?)?)?`;

/** A router state tree of at most `depth` levels. */
function tree(/** @type {number} */ depth) {
  // An entry is followed by a comma and the next key, or by the closing brace (no trailing comma).
  const child = depth > 1 ? tree(depth - 1) : "(?!)";
  const entry = `${STR}${lit(":")}${child}(?:${COMMA}(?=${QUOTE})|(?=${lit("}")}))`;
  return `${lit("[")}${SEGMENT}${COMMA}${lit("{")}(?:${entry})*${lit("}")}${TAIL}${lit("]")}`;
}

/** The whole header of a router state Next's renderer parses (no anchors: Next's `has` adds `^…$`). */
const ROUTER_STATE_PATTERN = tree(ROUTER_STATE_MAX_DEPTH);

/** A `has` value matching any header that is NOT {@link ROUTER_STATE_PATTERN}. */
const NOT_ROUTER_STATE_PATTERN = `(?!(?:${ROUTER_STATE_PATTERN})$)[\\s\\S]*`;

/** What a refused router state is told (app/api/router-state-refused, and proxy.ts for an empty header). */
const ROUTER_STATE_REFUSED_DETAIL = `the Next-Router-State-Tree header is not a router state (the URI-encoded JSON of a router state tree, at most ${ROUTER_STATE_MAX_DEPTH} levels deep and 40000 characters); the app's own client router sends one`;

module.exports = {
  ROUTER_STATE_MAX_DEPTH,
  ROUTER_STATE_PATTERN,
  NOT_ROUTER_STATE_PATTERN,
  ROUTER_STATE_REFUSED_DETAIL,
};
