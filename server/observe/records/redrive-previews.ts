/**
 * A re-drive dry run's preview: the DLQ positions it matched, kept for {@link REDRIVE_PREVIEW_TTL_MS}
 * under a random `previewId`, so the real re-drive of a filter sends exactly those records (one
 * poisoned since the dry run is left for the next one) and never selects again. At most
 * {@link REDRIVE_PREVIEWS_MAX} previews (the oldest go first); kept on `globalThis`, lost with the process.
 */
import { randomBytes } from "node:crypto";

/** How long a re-drive preview is kept. */
export const REDRIVE_PREVIEW_TTL_MS = 5 * 60_000;
/** Most re-drive previews kept at once. */
export const REDRIVE_PREVIEWS_MAX = 16;

/** What a dry run matched: its DLQ topic, the selection it was asked for, and the positions (`partition:offset`). */
export interface RedrivePreview {
  topic: string;
  /** The request's selection as JSON (filter and mode): the real run must ask for the same. */
  selection: string;
  positions: ReadonlySet<string>;
}

type Kept = RedrivePreview & { expiresAt: number };
type G = typeof globalThis & { __dedupHealthRedrivePreviews?: Map<string, Kept> };

function kept(): Map<string, Kept> {
  const g = globalThis as G;
  return (g.__dedupHealthRedrivePreviews ??= new Map());
}

/** Keeps a preview; its id. */
export function keepRedrivePreview(p: RedrivePreview, now = Date.now()): string {
  const m = kept();
  for (const [id, q] of m) if (q.expiresAt <= now) m.delete(id);
  for (const id of m.keys()) {
    if (m.size < REDRIVE_PREVIEWS_MAX) break;
    m.delete(id);
  }
  const id = randomBytes(12).toString("base64url");
  m.set(id, { ...p, expiresAt: now + REDRIVE_PREVIEW_TTL_MS });
  return id;
}

/** Takes a preview (used once): undefined when it is unknown or expired. */
export function takeRedrivePreview(id: string, now = Date.now()): RedrivePreview | undefined {
  const m = kept();
  const p = m.get(id);
  m.delete(id);
  return p && p.expiresAt > now ? p : undefined;
}
