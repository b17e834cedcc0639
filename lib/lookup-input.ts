import { DEDUP_KEY_SEGMENT } from "@/names/keys";

/**
 * What the key lookup accepts, as a user pastes it: a message id (a ULID in any case, a UUID) or
 * a whole dedup key as `redis-cli --scan` prints it (`<service>:dedup:<handler>:<id>`), whose
 * handler prefix is then the one checked first. Shared by the form (it says what is wrong before
 * asking) and `GET /api/keys/lookup` (it answers 400 with the same words).
 */

/** What the lookup expects, in the words the form and the 400 use. */
export const LOOKUP_INPUT_HINT =
  "a ULID (26 characters, any case, e.g. 01JD8X3Q…), a UUID (8-4-4-4-12 hex digits) or a whole key <service>:dedup:<handler>:<id> as redis-cli --scan prints it";

/** Crockford base32, 26 characters, the first at most 7 (128 bits). */
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `<service>:dedup:<handler>:<id>`: service and handler without ':' or spaces, the id the rest. */
const KEY_RE = new RegExp(`^([^:\\s]+):${DEDUP_KEY_SEGMENT}:([^:\\s]+):(\\S{1,200})$`);

/** A parsed lookup input: the message id (a ULID upper-cased) and, for a whole key, its handler prefix. */
export type LookupInput = { ok: true; id: string; prefix?: string } | { ok: false; error: string };

/** A ULID as the key holds it: ULIDs are case-insensitive and written upper-case (`ulid` does). */
function normaliseId(id: string): string {
  return ULID_RE.test(id) ? id.toUpperCase() : id;
}

/** Parses what a user typed or pasted into the lookup (trimmed); see the module comment. */
export function parseLookupInput(raw: string): LookupInput {
  const text = raw.trim();
  if (text === "") return { ok: false, error: `Enter ${LOOKUP_INPUT_HINT}.` };
  const key = KEY_RE.exec(text);
  if (key) return { ok: true, id: normaliseId(key[3]!), prefix: `${key[1]}:${DEDUP_KEY_SEGMENT}:${key[2]}` };
  if (ULID_RE.test(text) || UUID_RE.test(text)) return { ok: true, id: normaliseId(text) };
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return { ok: false, error: `"${shown}" is not a message id: expected ${LOOKUP_INPUT_HINT}.` };
}

/** The canonical text of a parsed input (the whole key with its id normalised, or the id): what the URL keeps. */
export function lookupText(p: Extract<LookupInput, { ok: true }>): string {
  return p.prefix ? `${p.prefix}:${p.id}` : p.id;
}
