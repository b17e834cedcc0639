/**
 * Alertmanager as the dashboard shows it: per alert instance, Alertmanager's state next to
 * Prometheus' (active / suppressed, by which silence or inhibition, until when), and the silences
 * the app lists, creates and expires (`GET|POST /api/silences`, `DELETE /api/silences/{id}`).
 *
 * Isomorphic: no Node imports. Times are ISO-8601 strings, as Alertmanager's API v2 writes them.
 */
import { z } from "zod";
import { answerSchema, LABEL_VALUE_RE, unavailableSchema } from "./common";

/** One matcher of a silence (Alertmanager API v2 `matcher`). */
export const silenceMatcherSchema = z.object({
  name: z.string(),
  value: z.string(),
  isRegex: z.boolean(),
  /** `false` = the negated form (`!=`, `!~`); Alertmanager omits it for `=` in old answers. */
  isEqual: z.boolean().default(true),
});
/** One matcher of a silence. */
export type SilenceMatcher = z.infer<typeof silenceMatcherSchema>;

/** A silence as Alertmanager lists it. */
export const silenceSchema = z.object({
  id: z.string(),
  /** `active` mutes now; `pending` starts later; `expired` ended (or was expired early). */
  state: z.enum(["active", "pending", "expired"]),
  matchers: z.array(silenceMatcherSchema),
  startsAt: z.string(),
  endsAt: z.string(),
  createdBy: z.string(),
  comment: z.string(),
});
/** A silence. */
export type Silence = z.infer<typeof silenceSchema>;

/** A silence or an inhibiting alert, as named next to an alert instance. */
export const suppressorSchema = z.object({
  /** `silence`: by a silence (its id, until its end); `inhibition`: by another firing alert (its labels). */
  kind: z.enum(["silence", "inhibition"]),
  /** The silence id, or the inhibiting alert's fingerprint. */
  id: z.string(),
  /** `alertname{labels}` of the inhibiting alert, or the silence's comment. */
  text: z.string(),
  /** When the silence ends; `null` for an inhibition (it lasts while the source alert fires). */
  until: z.string().nullable(),
});
/** What suppresses an alert instance. */
export type Suppressor = z.infer<typeof suppressorSchema>;

/**
 * Alertmanager's view of one Prometheus alert instance:
 * - `active` / `suppressed` / `unprocessed`: Alertmanager holds the alert in that state;
 * - `not-received`: Alertmanager holds no such alert (Prometheus sends only firing alerts, so a
 *   pending or inactive instance is never there).
 * `suppressedBy` lists what mutes it; for a `not-received` instance, the active silences whose
 * matchers match its labels (they will mute it once it fires).
 */
export const alertmanagerInstanceSchema = z.object({
  state: z.enum(["active", "suppressed", "unprocessed", "not-received"]),
  suppressedBy: z.array(suppressorSchema),
  /** Latest end of the silences in `suppressedBy`; `null` when none (or only inhibitions). */
  until: z.string().nullable(),
});
/** Alertmanager's view of one alert instance. */
export type AlertmanagerInstance = z.infer<typeof alertmanagerInstanceSchema>;

/** Alertmanager's part of an answer: its silences, or why there are none. */
export const alertmanagerPartSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("ok"), silences: z.array(silenceSchema) }),
  /** `ALERTMANAGER_URL` is set but Alertmanager did not answer. */
  unavailableSchema,
  /** `ALERTMANAGER_URL` is not set. */
  z.object({ status: z.literal("not-configured"), detail: z.string() }),
]);
/** Alertmanager's part of an answer. */
export type AlertmanagerPart = z.infer<typeof alertmanagerPartSchema>;

/** Answer of `GET /api/silences`. */
export const silencesResponseSchema = answerSchema({ alertmanager: alertmanagerPartSchema });
/** Answer of `GET /api/silences`. */
export type SilencesResponse = z.infer<typeof silencesResponseSchema>;

/** Longest silence the app creates: a week (a longer mute is a config change, not a silence). */
export const MAX_SILENCE_MINUTES = 7 * 24 * 60;

/**
 * Labels of an alert instance that do not identify it: the scrape target and replica it came from
 * (they change on a restart or a rescheduling), histogram buckets, and `severity` (the rule's, the
 * same for each of its instances). A silence made from an instance matches every other label.
 */
export const VOLATILE_LABELS: readonly string[] = [
  "instance",
  "pod",
  "replica",
  "replica_id",
  "container",
  "node",
  "le",
  "quantile",
  "severity",
];

/** A Prometheus label name. */
const LABEL_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

/**
 * Body of `POST /api/silences`: mute `{alertname, service[, handler]}` and, made from an alert
 * instance, its other identifying `labels` (`reason`, `topic`…; {@link VOLATILE_LABELS} are dropped)
 * for `durationMinutes`, starting now. `comment` says why (Alertmanager requires one); `createdBy`
 * who (default `dedup-health`). Without `labels` the silence mutes every instance of the alert on
 * the service (or handler).
 */
export const silenceCreateSchema = z
  .object({
    alertname: z.string().regex(LABEL_VALUE_RE, "expected an alert name, e.g. DedupDuplicateRateHigh"),
    service: z.string().regex(LABEL_VALUE_RE, "expected a service name"),
    handler: z.string().regex(LABEL_VALUE_RE, "expected a handler name").optional(),
    labels: z
      .record(z.string().regex(LABEL_NAME_RE, "expected a label name"), z.string().min(1).max(200))
      .refine((l) => Object.keys(l).length <= 30, "expected at most 30 labels")
      .optional(),
    durationMinutes: z
      .number()
      .int("expected whole minutes")
      .min(1, "expected at least 1 minute")
      .max(MAX_SILENCE_MINUTES, `expected at most ${MAX_SILENCE_MINUTES} minutes (7 days)`),
    comment: z
      .string()
      .trim()
      .min(1, "say why (Alertmanager requires a comment)")
      .max(500, "expected at most 500 characters"),
    // Printable, no newline: it is written to logs and to Alertmanager as given (a forged log line otherwise).
    createdBy: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters (no newline or control character)")
      .optional(),
  })
  .strict()
  .refine(
    (b) =>
      (["alertname", "service", "handler"] as const).every((k) => b.labels?.[k] === undefined || b.labels[k] === b[k]),
    { message: "labels.alertname, labels.service and labels.handler must equal alertname, service and handler" },
  );
/** Body of `POST /api/silences`. */
export type SilenceCreate = z.infer<typeof silenceCreateSchema>;

/**
 * The equality matchers of a silence to create: `alertname`, `service`, `handler` and every other
 * label given but the {@link VOLATILE_LABELS}, sorted by name after those three. A silence made
 * from `DedupRedisErrors{reason="redis_timeout"}` thus leaves the `reason="marshal"` instance alone.
 */
export function silenceMatchersOf(
  s: Pick<SilenceCreate, "alertname" | "service" | "handler" | "labels">,
): SilenceMatcher[] {
  const eq = (name: string, value: string): SilenceMatcher => ({ name, value, isRegex: false, isEqual: true });
  const fixed = new Set(["alertname", "service", "handler"]);
  const rest = Object.entries(s.labels ?? {})
    .filter(([k]) => !fixed.has(k) && !VOLATILE_LABELS.includes(k))
    .sort(([a], [b]) => a.localeCompare(b));
  return [
    eq("alertname", s.alertname),
    eq("service", s.service),
    ...(s.handler ? [eq("handler", s.handler)] : []),
    ...rest.map(([k, v]) => eq(k, v)),
  ];
}

/** Answer of `POST /api/silences` (201) and `DELETE /api/silences/{id}` (200): the silence as Alertmanager now lists it. */
export const silenceAnswerSchema = z.object({ silence: silenceSchema });
/** Answer of a silence write. */
export type SilenceAnswer = z.infer<typeof silenceAnswerSchema>;

/** Path parameter of `DELETE /api/silences/{id}`: Alertmanager's silence ids are UUIDs. */
export const silenceIdSchema = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "expected a silence id (a UUID)"),
});

/** Whether `m` matches `labels` as Alertmanager does (regexes anchored; a missing label is ""). */
export function matcherMatches(m: SilenceMatcher, labels: Readonly<Record<string, string>>): boolean {
  const v = labels[m.name] ?? "";
  let hit: boolean;
  if (m.isRegex) {
    try {
      hit = new RegExp(`^(?:${m.value})$`).test(v);
    } catch {
      hit = false;
    }
  } else hit = v === m.value;
  return m.isEqual ? hit : !hit;
}

/** Whether every matcher of `s` matches `labels`. */
export function silenceMatches(s: Pick<Silence, "matchers">, labels: Readonly<Record<string, string>>): boolean {
  return s.matchers.every((m) => matcherMatches(m, labels));
}

/** `{a="1", b!~"x"}`: a silence's matchers as amtool writes them. */
export function matchersText(ms: readonly SilenceMatcher[]): string {
  return ms
    .map((m) => `${m.name}${m.isEqual ? (m.isRegex ? "=~" : "=") : m.isRegex ? "!~" : "!="}${JSON.stringify(m.value)}`)
    .join(" ");
}
