/**
 * The Prometheus text exposition of a consumer's `/metrics`, read as samples: what the conformance
 * kit checks names, labels and counts on. Any client library's output (prom-client, the Java
 * simpleclient, Go's client_golang) parses the same way.
 */

/** One sample: a series' name, its labels and its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A scrape's samples, with the sum over the series that match. */
export interface Scrape {
  samples: readonly Sample[];
  /** Sum of `name`'s samples whose labels include every `match` pair; undefined when none matched. */
  sum(name: string, match?: Record<string, string>): number | undefined;
  /** `name`'s samples whose labels include every `match` pair. */
  series(name: string, match?: Record<string, string>): Sample[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;

function unescape(v: string): string {
  return v.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
}

function value(raw: string): number {
  if (raw === "+Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  return Number(raw);
}

/** Parses the text exposition format (comments and blank lines skipped). */
export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line.trim());
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1]!] = unescape(l[2]!);
    samples.push({ name: m[1]!, labels, value: value(m[3]!) });
  }
  const matches = (s: Sample, match: Record<string, string>) =>
    Object.entries(match).every(([k, v]) => s.labels[k] === v);
  const series = (name: string, match: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && matches(s, match));
  return {
    samples,
    series,
    sum(name, match = {}) {
      const found = series(name, match);
      return found.length === 0 ? undefined : found.reduce((a, s) => a + s.value, 0);
    },
  };
}

/** Scrapes `url` (a consumer's `/metrics`); throws with the URL and the status when it cannot. */
export async function scrape(url: string): Promise<Scrape> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  } catch (e) {
    const why = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
    throw new Error(`GET ${url}: ${why} — is the consumer running and is this its metrics address (--metrics)?`);
  }
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status} — is this its metrics address (--metrics)?`);
  return parseExposition(await res.text());
}
