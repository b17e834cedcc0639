/** The random parts of one request: path segments, query string, body; each value adversarial or plausible. */
import { chance, pick, rand } from "./random";
import { CONTROL, GLOB, INJECTION, KNOWN_PARAMS, NUMBERS, PLAUSIBLE, TRAVERSAL, UNICODE, WRONG_TYPES } from "./values";

/** One character repeated past common buffer sizes. */
function longString(): string {
  return pick(["a", "*", "%", ":", "é", "\u0000", "../"]).repeat(pick([256, 1025, 4097, 8193, 20_000]));
}

/** A value from one adversarial family (or, a fifth of the time, a plausible one). */
function adversarialValue(): string {
  const k = rand();
  if (k < 0.12) return pick(GLOB) + (chance(0.5) ? pick(PLAUSIBLE) : "");
  if (k < 0.2) return pick(CONTROL) + (chance(0.5) ? pick(PLAUSIBLE) : "");
  if (k < 0.3) return pick(UNICODE);
  if (k < 0.42) return pick(NUMBERS);
  if (k < 0.5) return pick(TRAVERSAL);
  if (k < 0.6) return pick(INJECTION);
  if (k < 0.68) return pick(WRONG_TYPES);
  if (k < 0.74) return longString();
  if (k < 0.8) return `${pick(PLAUSIBLE)}${pick(GLOB)}${pick(PLAUSIBLE)}`;
  return pick(PLAUSIBLE);
}

/** Percent-encodes a value, sometimes raw-ish (lone surrogates and %-sequences kept broken). */
export function enc(v: string): string {
  if (chance(0.05))
    return v
      .replace(/[ #&?\n\r\u0000]/g, (c) => encodeURIComponent(c))
      .replace(/%(?![0-9A-F]{2})/gi, pick(["%", "%25"]));
  try {
    return encodeURIComponent(v);
  } catch {
    return v.replace(/[\ud800-\udfff]/g, pick(["%ED%A0%80", "%ZZ", "%"]));
  }
}

/** `template` with each dynamic segment filled in. */
export function fillPath(template: string): string {
  return template
    .split("/")
    .map((seg) => {
      if (!/^\[.*\]$/.test(seg)) return seg;
      if (chance(0.3)) return enc(pick(PLAUSIBLE));
      return enc(adversarialValue());
    })
    .join("/");
}

/** A query string of up to 5 parameters, known or not, sometimes repeated or array style. */
export function query(): string {
  const n = Math.floor(rand() * 6);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = chance(0.75)
      ? pick(KNOWN_PARAMS)
      : chance(0.5)
        ? adversarialValue().slice(0, 64)
        : `unknown_${Math.floor(rand() * 1000)}`;
    parts.push(`${enc(name)}=${enc(adversarialValue())}`);
    if (chance(0.1)) parts.push(`${enc(name)}=${enc(adversarialValue())}`); // repeated
    if (chance(0.05)) parts.push(`${enc(name)}[]=${enc(adversarialValue())}`); // array style
  }
  if (chance(0.05)) parts.push("&&=&");
  return parts.length ? `?${parts.join("&")}` : "";
}

/** A request body and its content type: missing, malformed, huge, hostile or a random object of known fields. */
export function body(): { body?: string; contentType?: string } {
  const k = rand();
  const ct = chance(0.85)
    ? "application/json"
    : pick([
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=utf-16",
        "",
      ]);
  if (k < 0.1) return { contentType: ct };
  if (k < 0.2) return { body: "{not json", contentType: ct };
  if (k < 0.25) return { body: "[".repeat(5000) + "]".repeat(5000), contentType: ct };
  if (k < 0.3) return { body: JSON.stringify({ a: "x".repeat(1_500_000) }), contentType: ct };
  if (k < 0.38)
    return { body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}', contentType: ct };
  const fields = [
    "latencyMs",
    "errorRate",
    "redisCutoffMs",
    "traffic",
    "retryOnError",
    "rebalance",
    "forwarderRepublish",
    "restartBeforeCommit",
    "enabled",
    "rate",
    "ratePerSec",
    "replicas",
    "periodMs",
    "delayMs",
    "name",
    "unknown",
  ];
  const obj: Record<string, unknown> = {};
  for (let i = 0, n = Math.floor(rand() * 4); i < n; i++) {
    const f = pick(fields);
    const v = rand();
    // Small, short-lived values mostly: the fuzz must not cut the app's Redis for minutes.
    obj[f] =
      v < 0.2
        ? Number(pick(NUMBERS))
        : v < 0.35
          ? adversarialValue()
          : v < 0.5
            ? {
                enabled: chance(0.5),
                rate: rand(),
                ratePerSec: Math.floor(rand() * 10),
                periodMs: 2000 + Math.floor(rand() * 1000),
              }
            : v < 0.6
              ? [1, "a", null]
              : v < 0.7
                ? null
                : Math.floor(rand() * 50);
  }
  if ("redisCutoffMs" in obj) obj.redisCutoffMs = chance(0.5) ? 0 : obj.redisCutoffMs;
  return { body: JSON.stringify(obj), contentType: ct };
}

/** Whether every segment of `path` percent-decodes. */
export function decodable(path: string): boolean {
  try {
    for (const seg of path.split("/")) decodeURIComponent(seg);
    return true;
  } catch {
    return false;
  }
}
