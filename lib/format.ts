/**
 * Number formatting for the dashboard: every number the UI shows carries its unit
 * (%, ms, /s, keys, bytes). Isomorphic and pure.
 */
import type { AlertUnit } from "@/lib/alert-model";

const nf = (max: number) => new Intl.NumberFormat("en-US", { maximumFractionDigits: max });

/** A ratio 0..1 as a percentage: `0.1234` → `"12.3%"`; `null` → `"—"`. Small values keep two decimals. */
export function formatPercent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return "—";
  const pct = ratio * 100;
  return `${nf(pct !== 0 && Math.abs(pct) < 10 ? 2 : 1).format(pct)}%`;
}

/** Seconds as milliseconds: `0.0123` → `"12.3 ms"`; sub-millisecond values keep three decimals. */
export function formatSecondsAsMs(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const ms = seconds * 1000;
  return `${nf(ms < 1 ? 3 : ms < 10 ? 2 : 1).format(ms)} ms`;
}

/** Seconds, in ms below one second and in seconds above: `0.25` → `"250 ms"`, `31.42` → `"31.4 s"`. */
export function formatSeconds(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  return seconds < 1 ? formatSecondsAsMs(seconds) : `${nf(1).format(seconds)} s`;
}

/**
 * Events per second: `3.456` → `"3.46/s"`, `0.0123` → `"0.012/s"`; below 0.01/s two significant
 * digits, so a rare event stays visible: `0.00333` → `"0.0033/s"` (not `"0/s"`).
 */
export function formatRate(perSecond: number | null | undefined, what = ""): string {
  if (perSecond === null || perSecond === undefined || !Number.isFinite(perSecond)) return "—";
  const suffix = what ? ` ${what}/s` : "/s";
  const a = Math.abs(perSecond);
  const text =
    a !== 0 && a < 0.01
      ? new Intl.NumberFormat("en-US", { maximumSignificantDigits: 2 }).format(perSecond)
      : nf(a !== 0 && a < 1 ? 3 : 2).format(perSecond);
  return `${text}${suffix}`;
}

/**
 * A rate as the count it means over a window: `(0.0033, 300_000, "error")` → `"1 error in 5 min"`
 * (rate × window, what `increase()` reads). A non-zero rate under half an event: `"< 1 error in 5 min"`;
 * `null` for no rate. Plural by an `s`.
 */
export function formatBurst(perSecond: number | null | undefined, windowMs: number, what: string): string | null {
  if (perSecond === null || perSecond === undefined || !Number.isFinite(perSecond)) return null;
  const n = Math.round((perSecond * windowMs) / 1000);
  const win = formatDurationMs(windowMs);
  if (n === 0 && perSecond > 0) return `< 1 ${what} in ${win}`;
  return `${nf(0).format(n)} ${what}${n === 1 ? "" : "s"} in ${win}`;
}

/** A whole count with a unit word: `12345` → `"12,345 keys"`. */
export function formatCount(n: number | null | undefined, unit = "keys"): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return `${nf(0).format(Math.round(n))} ${unit}`;
}

/** A plain number with thousands separators, no unit (for big projector figures with a unit label beside). */
export function formatNumber(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return nf(digits).format(n);
}

const BYTE_UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB"] as const;

/** Bytes in binary units: `1536` → `"1.5 KiB"`, `80` → `"80 bytes"`. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < BYTE_UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${nf(i === 0 ? 0 : 1).format(v)} ${BYTE_UNITS[i]}`;
}

/**
 * A duration in milliseconds, two most significant units: `90_061_000` → `"1 d 1 h"`,
 * `-1` → `"no TTL"` (Redis' answer for a key that never expires), `null` → `"—"`.
 */
export function formatDurationMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 0) return "no TTL";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const parts: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "min"],
    [1000, "s"],
  ];
  const out: string[] = [];
  let rest = ms;
  for (const [size, unit] of parts) {
    if (out.length === 2) break;
    const n = Math.floor(rest / size);
    if (n > 0 || out.length > 0) {
      if (n > 0) out.push(`${n} ${unit}`);
      rest -= n * size;
      if (out.length > 0 && n === 0) break;
    }
  }
  return out.join(" ") || "0 s";
}

/** How long ago an ISO time was, relative to `now`: `"3 min ago"`; `null` → `"—"`. */
export function formatSince(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return "—";
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return "—";
  const d = Math.max(0, now - t);
  if (d < 5_000) return "just now";
  return `${formatDurationMs(d)} ago`;
}

/** Clock time of a unix-seconds timestamp, for chart axes: `"14:05"` (or `"Nov 30 14:05"` for long ranges). */
export function formatClock(unixSeconds: number, withDate = false): string {
  const d = new Date(unixSeconds * 1000);
  const hh = String(d.getHours()).padStart(2, "0");
  const mm = String(d.getMinutes()).padStart(2, "0");
  if (!withDate) return `${hh}:${mm}`;
  return `${d.toLocaleString("en-US", { month: "short" })} ${d.getDate()} ${hh}:${mm}`;
}

/** Unit of a value as the API names it (an alert's units, lib/alert-model). */
export type ValueUnit = AlertUnit;

/** Formats a value by its API unit: ratio → %, per_second → /s, seconds → ms. */
export function formatByUnit(v: number | null | undefined, unit: ValueUnit): string {
  switch (unit) {
    case "ratio":
      return formatPercent(v);
    case "seconds":
      return formatSecondsAsMs(v);
    case "per_second":
      return formatRate(v);
    case "count":
      return v === null || v === undefined || !Number.isFinite(v) ? "—" : String(Number(v.toPrecision(3)));
  }
}

/** A value in the unit its axis is labelled in: ratio → percent, seconds → ms, per_second as is. */
export function tickScale(unit: ValueUnit): number {
  return unit === "ratio" ? 100 : unit === "seconds" ? 1000 : 1;
}

/**
 * Compact axis tick of a value by its API unit: few digits so a tick never wraps (`188 ms`, `12%`,
 * `0.35/s`). With `step` (the distance between two ticks, in the API's unit) the tick keeps exactly
 * the decimals the step needs, so neighbouring ticks never read the same: ticks 0.001 apart read
 * `0.001/s`, `0.002/s`, `0.003/s` (they all read `0/s` before).
 */
export function formatTick(v: number, unit: ValueUnit, step?: number): string {
  if (!Number.isFinite(v)) return "";
  const stepDecimals =
    step !== undefined && step > 0 ? Math.max(0, Math.ceil(-Math.log10(step * tickScale(unit)) - 1e-9)) : null;
  const compact = (x: number) =>
    stepDecimals !== null
      ? new Intl.NumberFormat("en-US", {
          minimumFractionDigits: x === 0 ? 0 : stepDecimals,
          maximumFractionDigits: stepDecimals,
        }).format(x)
      : x !== 0 && Math.abs(x) < 1
        ? new Intl.NumberFormat("en-US", { maximumSignificantDigits: 2 }).format(x)
        : nf(Math.abs(x) >= 10 || x === 0 ? 0 : 1).format(x);
  switch (unit) {
    case "ratio":
      return `${compact(v * 100)}%`;
    case "seconds":
      return `${compact(v * 1000)} ms`;
    case "per_second":
      return `${compact(v)}/s`;
    case "count":
      return compact(v);
  }
}

/** Clock time with seconds (`14:05:09`), for chart axes over a few minutes. */
export function formatClockSeconds(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/**
 * A key count split into settled keys and leases with the leases' share:
 * `(1204, 3, 0.0025)` → `"1,204 done · 3 processing (0.25%)"`. `approx` (scaled from a sample)
 * prefixes both counts with `≈`.
 */
export function formatLeaseSplit(done: number, processing: number, share: number | null, approx = false): string {
  const a = approx ? "≈ " : "";
  return `${a}${formatNumber(done)} done · ${a}${formatNumber(processing)} processing${share === null ? "" : ` (${formatPercent(share)})`}`;
}

/**
 * When a shown count was taken and how far a recount is: `"at 18:20:04 · recount 40%"`. Every
 * page shows the last completed count with this line, never the partial totals of a running scan.
 */
export function formatCountedAt(countedAt: string | null | undefined, recount: number | null | undefined): string {
  const t = countedAt ? Date.parse(countedAt) : NaN;
  const at = Number.isFinite(t) ? `at ${formatClockSeconds(t / 1000)}` : "not counted yet";
  return recount === null || recount === undefined ? at : `${at} · recount ${Math.floor(recount * 100)}%`;
}

/** Progress (0..1) of a key count still running (`/api/handlers`' `scan`), `null` once done. */
export function scanFraction(scan: { scanned: number; total: number; done: boolean }): number | null {
  if (scan.done) return null;
  return scan.total > 0 ? Math.min(1, scan.scanned / scan.total) : 0;
}

/**
 * While keys are younger than their TTL window (the API's `window` with a `validAt`): "keys 58 min
 * old (oldest key in Redis) of a 1 d TTL: until Dec 2 17:02 the projection extrapolates from 58 min
 * of traffic" — said in durations and a clock time, not as a share of the window ("0.01% filled"
 * of a 7-day TTL says nothing). `null` once the window is full or unknown. `inStore` says where the
 * oldest key is, in the store's words (`lib/store-words.ts`).
 */
export function formatWindowFill(
  w:
    | { ageMs: number; filled: number; validAt: string | null; source: "oldest-key" | "process-start" }
    | null
    | undefined,
  inStore: string,
  now: number = Date.now(),
): string | null {
  if (!w || !w.validAt) return null;
  const at = Date.parse(w.validAt);
  if (!Number.isFinite(at)) return null;
  const when = formatClock(at / 1000, at - now > 20 * 3_600_000);
  const age = formatDurationMs(w.ageMs);
  const ttl = w.filled > 0 ? ` of a ${formatDurationMs(Math.round(w.ageMs / w.filled / 60_000) * 60_000)} TTL` : "";
  const from = w.source === "oldest-key" ? `oldest key ${inStore}` : "since process start";
  return `keys ${age} old (${from})${ttl}: until ${when} the projection extrapolates from ${age} of traffic`;
}

/**
 * An answer's text with the placeholders of the server's redaction (server/redact.ts: addresses
 * and credentials are never sent) in words a reader understands: `<host>:3000` → `host hidden:3000`,
 * `<redis>` → `redis address hidden`, `<redacted>` → `address hidden`.
 */
export function withHiddenWords(text: string): string {
  return text.replace(/<(host|redacted|prometheus|alertmanager|redis|postgres|kafka)>/g, (_, w: string) =>
    w === "redacted" ? "address hidden" : w === "host" ? "host hidden" : `${w} address hidden`,
  );
}
