/**
 * The dry runs' previews: the keys a dry run matched, each with the value it read, kept for
 * {@link PREVIEW_TTL_MS} under a random `previewId`, so the real action acts on exactly those keys
 * (a key whose value changed since is skipped) and never selects again. Bounded memory: at most
 * {@link PREVIEWS_MAX} previews and {@link PREVIEW_KEYS_TOTAL_MAX} keys in all (the oldest go first);
 * a dry run that matched more than {@link PREVIEW_KEYS_MAX} keys is not kept, and its answer says so.
 * Kept on `globalThis` (a route module may be evaluated twice); lost with the process.
 */
import { randomBytes } from "node:crypto";
import type { Selection } from "@/lib/api/key-actions";

/** How long a preview is kept. */
export const PREVIEW_TTL_MS = 5 * 60_000;
/** Most previews kept at once. */
export const PREVIEWS_MAX = 16;
/** Most keys one preview keeps. */
export const PREVIEW_KEYS_MAX = 100_000;
/** Most keys all previews keep together. */
export const PREVIEW_KEYS_TOTAL_MAX = 200_000;

/** What a dry run matched, for the real action bound to it. */
export interface Preview {
  prefix: string;
  action: "forget" | "ttl";
  selection: Selection;
  /** When the dry run read the keys. */
  at: Date;
  /** Each matched key and the value the dry run read. */
  keys: ReadonlyMap<string, string>;
}

interface Kept extends Preview {
  id: string;
  expiresAt: number;
}

type G = typeof globalThis & { __dedupHealthKeyPreviews?: Map<string, Kept> };

function kept(): Map<string, Kept> {
  const g = globalThis as G;
  g.__dedupHealthKeyPreviews ??= new Map();
  return g.__dedupHealthKeyPreviews;
}

function sweep(m: Map<string, Kept>, now: number): void {
  for (const [id, p] of m) if (p.expiresAt <= now) m.delete(id);
}

/** Keeps a preview; its id, or null with the reason it was not kept (too many keys). */
export function keepPreview(p: Preview, now = Date.now()): { id: string } | { id: null; note: string } {
  if (p.keys.size > PREVIEW_KEYS_MAX)
    return {
      id: null,
      note: `the dry run matched ${p.keys.size} keys, more than the ${PREVIEW_KEYS_MAX} a preview keeps: narrow the selection (a state, an idle time) to act on it`,
    };
  const m = kept();
  sweep(m, now);
  let total = p.keys.size;
  for (const q of m.values()) total += q.keys.size;
  // Oldest first (a Map iterates in insertion order).
  for (const [id, q] of m) {
    if (m.size < PREVIEWS_MAX && total <= PREVIEW_KEYS_TOTAL_MAX) break;
    m.delete(id);
    total -= q.keys.size;
  }
  const id = randomBytes(12).toString("base64url");
  m.set(id, { ...p, id, expiresAt: now + PREVIEW_TTL_MS });
  return { id };
}

/** The preview `id` if still kept (not removed: see {@link dropPreview}). */
export function findPreview(id: string, now = Date.now()): Preview | null {
  const p = kept().get(id);
  return p && p.expiresAt > now ? p : null;
}

/** Forgets a preview once its real action ran: a second confirmation acts on nothing. */
export function dropPreview(id: string): void {
  kept().delete(id);
}
