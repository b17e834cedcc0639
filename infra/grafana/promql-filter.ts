/**
 * Adds label matchers to every series selector of a PromQL expression, so that an alert's value
 * expression (written once, in lib/thresholds.ts) follows the dashboard's `$service` / `$handler`
 * variables without a second hand-written copy. A small scanner, not a parser: it knows string
 * literals, `[…]` ranges and durations, label lists after `by`/`without`/`on`/`ignoring`/`group_*`,
 * and function calls (an identifier followed by `(`); every other identifier is a metric name.
 */

const LABEL_LIST_KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
// Aggregators are listed because `sum by (x) (…)` puts `by` between the name and its `(`.
const AGGREGATORS = [
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
  "limitk",
  "limit_ratio",
];
const KEYWORDS = new Set([
  ...LABEL_LIST_KEYWORDS,
  ...AGGREGATORS,
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "inf",
  "nan",
  "atan2",
]);

/** Index just past the string literal that starts at `i` (quote at `s[i]`). */
function endOfString(s: string, i: number): number {
  const q = s[i];
  let j = i + 1;
  while (j < s.length && s[j] !== q) j += s[j] === "\\" ? 2 : 1;
  return j + 1;
}

/** Index just past the bracket group that opens at `i` (`(`, `{` or `[`), strings skipped. */
function endOfGroup(s: string, i: number): number {
  const open = s[i]!;
  const close = { "(": ")", "{": "}", "[": "]" }[open]!;
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const c = s[j]!;
    if (c === '"' || c === "'" || c === "`") j = endOfString(s, j) - 1;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return j + 1;
  }
  throw new SyntaxError(`unbalanced ${open} at ${i} in ${s}`);
}

/**
 * `expr` with `matchers` (e.g. `service=~"$service"`) added to each series selector:
 * `m[5m]` → `m{matchers}[5m]`, `m{a="b"}` → `m{matchers, a="b"}`. `matchers` empty → `expr`.
 * **PromQL text, not a value**: never pass user input.
 */
export function withMatchers(expr: string, matchers: string): string {
  if (!matchers) return expr;
  let out = "";
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === "`") {
      const j = endOfString(expr, i);
      out += expr.slice(i, j);
      i = j;
    } else if (c === "[") {
      const j = endOfGroup(expr, i);
      out += expr.slice(i, j);
      i = j;
    } else if (c === "{") {
      // A selector without a metric name: `{__name__="m"}`.
      const j = endOfGroup(expr, i);
      out += braces(expr.slice(i + 1, j - 1), matchers);
      i = j;
    } else if (/[0-9.]/.test(c)) {
      const m = /^[0-9.][\w.+-]*/.exec(expr.slice(i))![0];
      out += m;
      i += m.length;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const name = /^[a-zA-Z_:][\w:]*/.exec(expr.slice(i))![0];
      let j = i + name.length;
      while (expr[j] === " ") j++;
      if (expr[j] === "(" && LABEL_LIST_KEYWORDS.has(name)) {
        const k = endOfGroup(expr, j);
        out += expr.slice(i, k);
        i = k;
      } else if (expr[j] === "(" || KEYWORDS.has(name.toLowerCase())) {
        out += name;
        i += name.length;
      } else if (expr[j] === "{") {
        const k = endOfGroup(expr, j);
        out += name + braces(expr.slice(j + 1, k - 1), matchers);
        i = k;
      } else {
        out += `${name}{${matchers}}`;
        i += name.length;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function braces(inner: string, matchers: string): string {
  return inner.trim() ? `{${matchers}, ${inner.trim()}}` : `{${matchers}}`;
}
