/**
 * Checks docs/CONTRACT.md against the names the code writes once (names/dedup.ts, names/kafka.ts)
 * and the library's own readers (the value parser, the payload fingerprint, the histogram
 * buckets): every table of the doc is parsed, and each disagreement is one line of the answer.
 * The contract is the single source only while this finds nothing.
 */
import { CHECK_DURATION_BUCKETS, HANDLER_TIME_BUCKETS, payloadFingerprint, parseClaimValue } from "@/server/dedup";
import { CONSUMER_INFO_METRIC } from "@/names/observe";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  PAYLOAD_DIFFERENCES,
  HANDLER_SUCCESSES,
  METRIC_LABELS,
  METRIC_NAMES,
  POISON_METADATA_KEYS,
  POISON_REASON_CLASSES,
  PROCESSED_RESULTS,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import {
  CONTRACT_VERSION,
  HANDLER_INFO_LABELS,
  HANDLER_INFO_METRIC,
  INFO_FAILURE_MODES,
  INFO_HEARTBEATS,
  INFO_MARKINGS,
  INFO_MODES,
  TRANSACTIONS_DECLARATION,
} from "@/names/contract";
import { dedupKeyPrefix, TTL_CLASSES, TTL_POLICY } from "@/names/keys";

/** One markdown table: its column names and rows of cells. */
export interface DocTable {
  header: string[];
  rows: string[][];
}

const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => c.trim());

/** Every table of a markdown text. */
export function docTables(md: string): DocTable[] {
  const lines = md.split("\n");
  const out: DocTable[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.trim().startsWith("|") || !/^\s*\|\s*-/.test(lines[i + 1]!)) continue;
    const t: DocTable = { header: cellsOf(lines[i]!), rows: [] };
    for (i += 2; i < lines.length && lines[i]!.trim().startsWith("|"); i++) t.rows.push(cellsOf(lines[i]!));
    out.push(t);
  }
  return out;
}

/** The backticked names of a cell, in order (`` `` `` is the empty string). */
export const ticks = (cell: string): string[] => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);

/** The table whose first columns are `cols`. */
function table(tables: readonly DocTable[], ...cols: string[]): DocTable | undefined {
  return tables.find((t) => cols.every((c, i) => t.header[i] === c));
}

const sameList = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((x, i) => String(x) === String(b[i]));
const show = (xs: readonly unknown[]) => xs.map(String).join(", ");

/** Placeholders of the value forms, filled to test the library's parser on each. */
const SAMPLE: Record<string, string> = {
  "<token>": "host-1/a7",
  "<topic>": "orders",
  "<partition>": "3",
  "<offset>": "42",
  "<fingerprint>": "A3ySFO7",
};

/** The constants a label's values are written once in. */
const LABEL_VALUES: Record<string, readonly string[]> = {
  [`${METRIC_NAMES.processed}/result`]: PROCESSED_RESULTS,
  [`${METRIC_NAMES.errors}/reason`]: DEDUP_ERROR_REASONS,
  [`${METRIC_NAMES.unchecked}/reason`]: DEDUP_ERROR_REASONS,
  [`${METRIC_NAMES.poisoned}/reason_poisoned`]: POISON_REASON_CLASSES,
  [`${METRIC_NAMES.duplicatesByCause}/cause`]: DUPLICATE_CAUSES,
  [`${METRIC_NAMES.payloadConflicts}/difference`]: PAYLOAD_DIFFERENCES,
  [`${METRIC_NAMES.handlerExecutionTime}/success`]: HANDLER_SUCCESSES,
  [`${HANDLER_INFO_METRIC}/marking`]: INFO_MARKINGS,
  [`${HANDLER_INFO_METRIC}/failure_mode`]: INFO_FAILURE_MODES,
  [`${HANDLER_INFO_METRIC}/heartbeat`]: INFO_HEARTBEATS,
  [`${HANDLER_INFO_METRIC}/mode`]: INFO_MODES,
};

function checkMetrics(tables: readonly DocTable[], bad: (m: string) => void): string[] {
  const t = table(tables, "metric", "type", "labels");
  if (!t) return (bad("no metrics table (metric | type | labels | buckets | zero series)"), []);
  const byName = new Map(t.rows.map((r) => [ticks(r[0] ?? "")[0] ?? "", r]));
  const expected = new Map<string, readonly string[]>(
    Object.entries(METRIC_NAMES).map(([k, n]) => [n, METRIC_LABELS[k as keyof typeof METRIC_LABELS]]),
  );
  expected.set(HANDLER_INFO_METRIC, HANDLER_INFO_LABELS);
  for (const [name, labels] of expected) {
    const r = byName.get(name);
    if (!r) {
      bad(`metric ${name} (names/dedup.ts) is not in the metrics table`);
      continue;
    }
    if (!sameList(ticks(r[2] ?? ""), labels))
      bad(`metric ${name}: labels in the doc ${show(ticks(r[2] ?? ""))}, in names/ ${show(labels)}`);
    const type =
      name === METRIC_NAMES.checkDuration || name === METRIC_NAMES.handlerExecutionTime
        ? "histogram"
        : name.endsWith("_total")
          ? "counter"
          : "gauge";
    if (r[1] !== type) bad(`metric ${name}: type ${r[1]} in the doc, ${type} in the library`);
    const buckets =
      name === METRIC_NAMES.checkDuration
        ? CHECK_DURATION_BUCKETS
        : name === METRIC_NAMES.handlerExecutionTime
          ? HANDLER_TIME_BUCKETS
          : [];
    if (!sameList(ticks(r[3] ?? "").map(Number), buckets))
      bad(`metric ${name}: buckets in the doc ${show(ticks(r[3] ?? ""))}, in the library ${show(buckets)}`);
  }
  for (const name of byName.keys())
    if (!expected.has(name)) bad(`metric ${name} is in the doc but not in names/dedup.ts`);

  const v = table(tables, "metric", "label", "values");
  if (!v) bad("no label values table (metric | label | values)");
  const seen = new Set<string>();
  for (const r of v?.rows ?? []) {
    const key = `${ticks(r[0] ?? "")[0]}/${ticks(r[1] ?? "")[0]}`;
    seen.add(key);
    const want = LABEL_VALUES[key];
    if (!want) bad(`label values of ${key} are in the doc, but names/ writes none`);
    else if (!sameList(ticks(r[2] ?? ""), want))
      bad(`label ${key}: values in the doc ${show(ticks(r[2] ?? ""))}, in names/ ${show(want)}`);
  }
  for (const key of Object.keys(LABEL_VALUES))
    if (!seen.has(key)) bad(`label values of ${key} (names/) are not in the doc`);
  return [...byName.keys()];
}

function checkValues(tables: readonly DocTable[], bad: (m: string) => void): string[] {
  const t = table(tables, "value", "state");
  if (!t) return (bad("no value forms table (value | state | …)"), []);
  const forms = t.rows.map((r) => ticks(r[0] ?? "")[0] ?? "");
  const states = new Set<string>();
  for (const [i, r] of t.rows.entries()) {
    const sample = forms[i]!.replace(/<[a-z]+>/g, (p) => SAMPLE[p] ?? p);
    const parsed = parseClaimValue(sample).state;
    states.add(parsed);
    if (parsed !== r[1]) bad(`value ${forms[i]}: the doc says ${r[1]}, the library reads ${sample} as ${parsed}`);
  }
  for (const s of ["processing", "claimed", "done", "naive"])
    if (!states.has(s)) bad(`no value form the library reads as ${s} is documented`);
  const fp = table(tables, "payload", "fingerprint");
  if (!fp) bad("no fingerprint example table (payload | fingerprint)");
  for (const r of fp?.rows ?? []) {
    const [payload = "", want = ""] = [ticks(r[0] ?? "")[0], ticks(r[1] ?? "")[0]];
    const got = payloadFingerprint(Buffer.from(payload));
    if (got !== want)
      bad(`fingerprint of ${JSON.stringify(payload)}: the doc says ${want}, the library computes ${got}`);
  }
  return forms;
}

function checkTtlAndInfo(md: string, tables: readonly DocTable[], bad: (m: string) => void): void {
  const classes = table(tables, "class", "ttl_ms");
  const want: Record<string, number> = {
    default: TTL_POLICY.defaultMs,
    critical: TTL_POLICY.criticalMs,
    analytics: TTL_POLICY.analyticsMaxMs,
  };
  const docClasses = (classes?.rows ?? []).map((r) => ticks(r[0] ?? "")[0] ?? "");
  if (!sameList([...docClasses].sort(), [...TTL_CLASSES].sort()))
    bad(`TTL classes in the doc ${show(docClasses)}, in names/ ${show(TTL_CLASSES)}`);
  for (const r of classes?.rows ?? []) {
    const c = ticks(r[0] ?? "")[0] ?? "";
    if (want[c] !== undefined && Number(ticks(r[1] ?? "")[0]) !== want[c])
      bad(`TTL class ${c}: ${ticks(r[1] ?? "")[0]} ms in the doc, ${want[c]} in names/`);
  }
  const limits = table(tables, "limit", "ttl_ms");
  const lim: Record<string, number> = { minimum: TTL_POLICY.minimumMs, "warn below": TTL_POLICY.warnBelowMs };
  for (const [name, ms] of Object.entries(lim)) {
    const r = limits?.rows.find((x) => x[0] === name);
    if (!r || Number(ticks(r[1] ?? "")[0]) !== ms)
      bad(`TTL limit ${name}: ${r ? ticks(r[1] ?? "")[0] : "absent"} in the doc, ${ms} in names/`);
  }
  const info = table(tables, "label", "value", "when absent");
  const docLabels = (info?.rows ?? []).map((r) => ticks(r[0] ?? "")[0] ?? "");
  if (!sameList(docLabels, HANDLER_INFO_LABELS))
    bad(`${HANDLER_INFO_METRIC} labels in the doc ${show(docLabels)}, in names/ ${show(HANDLER_INFO_LABELS)}`);
  // What a transactions-mode handler leaves out is said to not apply, label by label, and nothing else is.
  const tx = TRANSACTIONS_DECLARATION;
  for (const r of info?.rows ?? []) {
    const label = ticks(r[0] ?? "")[0] ?? "";
    const said = ticks(r[2] ?? "").includes(tx.marking) && (r[2] ?? "").includes("does not apply");
    if (said !== tx.inapplicable.includes(label as never))
      bad(
        `${HANDLER_INFO_METRIC} label ${label}: the doc ${said ? "says" : "does not say"} it does not apply under marking ${tx.marking}; names/ TRANSACTIONS_DECLARATION ${said ? "keeps it" : "leaves it out"}`,
      );
  }
  const version = /^# .*contract (\S+)/m.exec(md)?.[1];
  const contractRow = info?.rows.find((r) => ticks(r[0] ?? "")[0] === "contract");
  if (version !== CONTRACT_VERSION || !contractRow || !ticks(contractRow[1] ?? "").includes(CONTRACT_VERSION))
    bad(`contract version: the doc says ${version}, names/ CONTRACT_VERSION is ${CONTRACT_VERSION}`);
  const key = `${dedupKeyPrefix("<service>", "<handler>")}:<uuid>`;
  if (!md.includes(`\`${key}\``)) bad(`the key ${key} (names/ dedupKeyPrefix) is not in the doc`);
}

/** Every disagreement between docs/CONTRACT.md's text `md` and the code; empty when they agree. */
export function checkContract(md: string): string[] {
  const out: string[] = [];
  const bad = (m: string) => void out.push(m);
  const tables = docTables(md);
  const metrics = checkMetrics(tables, bad);
  const forms = checkValues(tables, bad);
  checkTtlAndInfo(md, tables, bad);

  const headers = (table(tables, "header", "value")?.rows ?? []).map((r) => ticks(r[0] ?? "")[0] ?? "");
  const wantHeaders = [WATERMILL_UUID_HEADER, ...POISON_METADATA_KEYS];
  if (!sameList(headers, wantHeaders)) bad(`DLQ headers in the doc ${show(headers)}, in names/ ${show(wantHeaders)}`);

  const series = (table(tables, "series", "from")?.rows ?? []).map((r) => ticks(r[0] ?? "")[0] ?? "");
  for (const s of [CONSUMER_INFO_METRIC, KAFKA_METRIC_NAMES.lag])
    if (!series.includes(s)) bad(`series ${s} the dashboard reads is not in the doc's series table`);
  // Every figure names only what the contract defines, and every metric serves some figure.
  const defined = new Set([
    ...metrics,
    ...forms,
    ...headers,
    ...series,
    `${dedupKeyPrefix("<service>", "<handler>")}:<uuid>`,
  ]);
  const figures = table(tables, "figure", "needs");
  if (!figures) bad("no figure table (figure | needs)");
  const needed = new Set<string>();
  for (const r of figures?.rows ?? []) {
    for (const n of ticks(r[1] ?? "")) {
      needed.add(n);
      if (!defined.has(n)) bad(`figure "${r[0]}" needs ${n}, which the contract does not define`);
    }
  }
  for (const m of metrics) if (!needed.has(m)) bad(`metric ${m} serves no figure of the figure table`);
  return out;
}
