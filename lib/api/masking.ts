/**
 * Payload masking, the shapes: the rules `MASK_RULES` holds (per topic, a JSON pointer into the
 * payload or a header name, `MASK` or `REMOVE`) and the note an answer carries for what it masked.
 * Isomorphic: server/config.ts validates the variable with {@link maskRulesSchema}, the server
 * (server/observe/records/masking.ts) applies the rules, the UI reads the notes.
 */
import { z } from "zod";

/** What a masked value reads as: the key is kept, its value is this text. */
export const MASK_MARKER = "***";

/** `MASK`: the value becomes {@link MASK_MARKER}, the key stays; `REMOVE`: key and value are gone. */
export const MASK_ACTIONS = ["MASK", "REMOVE"] as const;
/** One of {@link MASK_ACTIONS}. */
export type MaskAction = (typeof MASK_ACTIONS)[number];

/**
 * A JSON pointer (RFC 6901): empty (the whole payload) or `/`-separated segments, `~0` for `~` and
 * `~1` for `/`. A segment `*` stands for every member of an object or element of an array.
 */
const jsonPointer = z
  .string()
  .max(500)
  .regex(
    /^(\/([^~/]|~[01])*)*$/,
    "expected a JSON pointer such as /customer/email (~1 for /, ~0 for ~; * for every element)",
  );

/** One rule: on `topic` (and its DLQ topic; `*`: every topic), the payload field at `pointer` or every header named `header` (case-insensitive). */
export const maskRuleSchema = z
  .object({
    topic: z.string().min(1, "expected a topic name or *").max(249),
    pointer: jsonPointer.optional(),
    header: z.string().min(1, "expected a header name").max(200).optional(),
    action: z.enum(MASK_ACTIONS, "expected action MASK or REMOVE"),
  })
  .strict()
  .refine(
    (r) => (r.pointer === undefined) !== (r.header === undefined),
    "expected either pointer or header in each rule",
  );
/** One masking rule. */
export type MaskRule = z.infer<typeof maskRuleSchema>;

/** The rules of `MASK_RULES`: a JSON array of {@link maskRuleSchema}. */
export const maskRulesSchema = z.array(maskRuleSchema).max(200, "expected at most 200 rules");

/**
 * What an answer masked for the caller (a role without `unmasked`): in the payload at `field` (a
 * JSON pointer; `whole`: the payload was not JSON, or the pointer was empty, so all of it), or every
 * header named `field`.
 */
export const maskedNoteSchema = z.object({
  in: z.enum(["payload", "header"]),
  field: z.string(),
  action: z.enum(MASK_ACTIONS),
  whole: z.boolean().optional(),
});
/** What an answer masked. */
export type MaskedNote = z.infer<typeof maskedNoteSchema>;

/** The notes of one record; present (possibly empty) when rules applied to the caller, absent when the caller sees payloads unmasked. */
export const maskedListSchema = z.array(maskedNoteSchema).optional();

/** A note in words: `payload /card/number masked`, `header x-user-email removed`. */
export function maskedNoteText(n: MaskedNote): string {
  const what = n.in === "payload" ? (n.whole ? "the whole payload" : `payload ${n.field}`) : `header ${n.field}`;
  return `${what} ${n.action === "MASK" ? "masked" : "removed"}${n.whole && n.field !== "" ? ` (not JSON: rule ${n.field})` : ""}`;
}

/** How `MASK_RULES` is written, for error messages. */
export const MASK_RULES_FORM = `expected a JSON array of rules such as [{"topic":"billing.events","pointer":"/card/number","action":"MASK"},{"topic":"*","header":"x-user-email","action":"REMOVE"}]`;

/** Parses the text of `MASK_RULES`: the rules, or what is wrong (which rule, which field) and the expected form. */
export function parseMaskRules(text: string): { ok: true; rules: MaskRule[] } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: `not JSON: ${MASK_RULES_FORM}` };
  }
  const r = maskRulesSchema.safeParse(raw);
  if (r.success) return { ok: true, rules: r.data };
  const issue = r.error.issues[0];
  const [index, ...field] = issue?.path ?? [];
  const where = typeof index === "number" ? `rule ${index}${field.length ? ` (${field.join(".")})` : ""}: ` : "";
  return { ok: false, error: `${where}${issue?.message ?? "invalid"}; ${MASK_RULES_FORM}` };
}
