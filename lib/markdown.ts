/**
 * A small Markdown reader for the subset RUNBOOK.md is written in: ATX headings, paragraphs,
 * pipe tables, ordered and unordered lists (nested by indentation, holding tables and lists),
 * and inline code, links, `**strong**` and `*emphasis*`. It builds a tree of plain data, never
 * HTML: the page renders it as React elements, so every character of the file is text (escaped)
 * and nothing needs an inline script or style (CSP).
 *
 * Heading ids are GitHub's anchors ({@link headingSlug}), the ones `lib/alert-model.ts` builds
 * for every alert's `runbookAnchor`.
 */

/** Inline content of a paragraph, a heading, a table cell or a list item. */
export type Inline =
  | { readonly t: "text"; readonly v: string }
  | { readonly t: "code"; readonly v: string }
  | { readonly t: "strong" | "em"; readonly c: readonly Inline[] }
  /** `href` is `null` for a link the page cannot follow (a path inside the repository). */
  | { readonly t: "link"; readonly href: string | null; readonly target: string; readonly c: readonly Inline[] };

/** A block of the document. */
export type Block =
  | { readonly t: "heading"; readonly level: number; readonly id: string; readonly c: readonly Inline[] }
  | { readonly t: "p"; readonly c: readonly Inline[] }
  | {
      readonly t: "table";
      readonly head: readonly (readonly Inline[])[];
      readonly rows: readonly (readonly (readonly Inline[])[])[];
    }
  | {
      readonly t: "list";
      readonly ordered: boolean;
      readonly start: number;
      readonly items: readonly (readonly Block[])[];
    };

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a dash. */
export function headingSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The text of inline content without its markup (what a heading's anchor is made from). */
export function plainText(c: readonly Inline[]): string {
  return c.map((x) => (x.t === "text" || x.t === "code" ? x.v : plainText(x.c))).join("");
}

/** Private-use characters that stand for a code span while the rest of a line is read. */
const CODE_MARK = "\uE000";
const CODE_END = "\uE001";

/** Reads inline markup: code spans first (their content is literal), then links and emphasis. */
export function parseInline(s: string): Inline[] {
  const codes: string[] = [];
  const masked = s.replace(/`([^`]+)`/g, (_, code: string) => `${CODE_MARK}${codes.push(code) - 1}${CODE_END}`);
  return readMasked(masked, codes);
}

const INLINE_PATTERNS: ReadonlyArray<{ re: RegExp; make: (m: RegExpExecArray, codes: readonly string[]) => Inline }> = [
  {
    re: new RegExp(`${CODE_MARK}(\\d+)${CODE_END}`),
    make: (m, codes) => ({ t: "code", v: codes[Number(m[1])] ?? "" }),
  },
  {
    re: /\[([^\]]+)\]\(([^)\s]+)\)/,
    make: (m, codes) => ({
      t: "link",
      href: safeHref(m[2] ?? ""),
      target: m[2] ?? "",
      c: readMasked(m[1] ?? "", codes),
    }),
  },
  { re: /\*\*(.+?)\*\*/, make: (m, codes) => ({ t: "strong", c: readMasked(m[1] ?? "", codes) }) },
  {
    re: /(?<![*\w])\*(?![\s*])(.+?)(?<![\s*])\*(?![*\w])/,
    make: (m, codes) => ({ t: "em", c: readMasked(m[1] ?? "", codes) }),
  },
];

function readMasked(s: string, codes: readonly string[]): Inline[] {
  const out: Inline[] = [];
  let rest = s;
  while (rest) {
    let best: { m: RegExpExecArray; make: (typeof INLINE_PATTERNS)[number]["make"] } | null = null;
    for (const p of INLINE_PATTERNS) {
      const m = p.re.exec(rest);
      if (m && (!best || m.index < best.m.index)) best = { m, make: p.make };
    }
    if (!best) break;
    if (best.m.index > 0) out.push({ t: "text", v: rest.slice(0, best.m.index) });
    out.push(best.make(best.m, codes));
    rest = rest.slice(best.m.index + best.m[0].length);
  }
  if (rest) out.push({ t: "text", v: rest });
  return out;
}

/** Only in-page anchors and http(s) URLs become links; anything else (a repository path, `javascript:`) stays text. */
function safeHref(url: string): string | null {
  return /^#[\w-]+$/.test(url) || /^https?:\/\/[^\s"'<>]+$/i.test(url) ? url : null;
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const LIST_ITEM = /^( *)([-*]|\d{1,9}[.)])( +)(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

const indentOf = (line: string) => line.length - line.trimStart().length;
const isBlank = (line: string | undefined) => line === undefined || line.trim() === "";
const startsTable = (lines: readonly string[], i: number) =>
  lines[i]!.trimStart().startsWith("|") && TABLE_RULE.test(lines[i + 1] ?? "");
/** A line that starts a block of its own and so ends a paragraph. */
const startsBlock = (lines: readonly string[], i: number) =>
  HEADING.test(lines[i]!) || LIST_ITEM.test(lines[i]!) || startsTable(lines, i);

/** Splits a table row on the pipes outside code spans. */
function cells(row: string): Inline[][] {
  const parts: string[] = [""];
  let inCode = false;
  for (const ch of row.trim().replace(/^\|/, "").replace(/\|$/, "")) {
    if (ch === "`") inCode = !inCode;
    if (ch === "|" && !inCode) parts.push("");
    else parts[parts.length - 1] += ch;
  }
  return parts.map((p) => parseInline(p.trim()));
}

/** Reads a whole document (or a list item's dedented body) into blocks. */
export function parseMarkdown(text: string): Block[] {
  const ids = new Map<string, number>();
  const unique = (slug: string) => {
    const n = ids.get(slug) ?? 0;
    ids.set(slug, n + 1);
    return n === 0 ? slug : `${slug}-${n}`;
  };
  return parseBlocks(text.replace(/\r\n?/g, "\n").split("\n"), unique);
}

type Unique = (slug: string) => string;

function parseBlocks(lines: readonly string[], unique: Unique): Block[] {
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const heading = HEADING.exec(line);
    if (isBlank(line)) i++;
    else if (heading) {
      const c = parseInline(heading[2] ?? "");
      out.push({ t: "heading", level: heading[1]!.length, id: unique(headingSlug(plainText(c))), c });
      i++;
    } else if (startsTable(lines, i)) {
      const rows: Inline[][][] = [];
      for (i += 2; i < lines.length && lines[i]!.trimStart().startsWith("|"); i++) rows.push(cells(lines[i]!));
      out.push({ t: "table", head: cells(line), rows });
    } else if (LIST_ITEM.test(line)) {
      i = parseList(lines, i, out, unique);
    } else {
      const para: string[] = [];
      for (; i < lines.length && !isBlank(lines[i]) && (para.length === 0 || !startsBlock(lines, i)); i++)
        para.push(lines[i]!.trim());
      out.push({ t: "p", c: parseInline(para.join(" ")) });
    }
  }
  return out;
}

/** Reads the list starting at line `i` into `out`; returns the index of the first line after it. */
function parseList(lines: readonly string[], i: number, out: Block[], unique: Unique): number {
  const first = LIST_ITEM.exec(lines[i]!)!;
  const ordered = /\d/.test(first[2]!);
  const base = first[1]!.length;
  const items: Block[][] = [];
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]!);
    if (!m || m[1]!.length !== base || /\d/.test(m[2]!) !== ordered) break;
    const contentIndent = base + m[2]!.length + m[3]!.length;
    const body = [m[4]!];
    for (i++; i < lines.length; i++) {
      const l = lines[i]!;
      if (isBlank(l)) {
        // A blank line stays inside the item only when the item goes on, indented, after it.
        const next = lines.slice(i).find((x) => !isBlank(x));
        if (next === undefined || indentOf(next) < contentIndent) break;
        body.push("");
      } else if (indentOf(l) >= contentIndent) body.push(l.slice(contentIndent));
      else if (!isBlank(lines[i - 1]) && !startsBlock(lines, i))
        body.push(l.trim()); // a lazy continuation line
      else break;
    }
    items.push(parseBlocks(body, unique));
    // Blank lines between two items of this list belong to it; before anything else they end it.
    let j = i;
    while (j < lines.length && isBlank(lines[j])) j++;
    if (j > i && LIST_ITEM.exec(lines[j] ?? "")?.[1]?.length === base) i = j;
  }
  out.push({ t: "list", ordered, start: ordered ? Number.parseInt(first[2]!, 10) : 1, items });
  return i;
}
