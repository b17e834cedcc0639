/**
 * The process's hot-key sketches and their merge (see `./hot-keys`): what the dashboard reads for
 * "the most swallowed UUIDs" of a handler across the replicas one process runs.
 */
import { mergeSketches, type HotKeyTable } from "./hot-key-sketch";
import { HotKeys } from "./hot-keys";

/**
 * One handler's table over several {@link HotKeys} (the replicas of a process, or tables fetched
 * from several processes turned back into sketches): the windows of all of them merged, at most
 * the largest `capacity` keys.
 */
export function mergeHotKeys(handler: string, sources: readonly HotKeys[]): HotKeyTable | undefined {
  const parts = sources.flatMap((h) => {
    const s = h.sketchesOf(handler);
    return s ? [{ ...s, capacity: h.options.capacity }] : [];
  });
  if (parts.length === 0) return undefined;
  const since = Math.min(...parts.map((p) => p.since));
  const capacity = Math.max(...parts.map((p) => p.capacity));
  return mergeSketches(
    handler,
    since,
    capacity,
    parts.flatMap((p) => p.sketches),
  );
}

/**
 * The process's hot-key sketches, one per Deduplicator that was given this board (on `globalThis`:
 * Next.js evaluates modules more than once). A sketch idle for two windows is dropped, so replicas
 * that came and went do not pile up; at most `max` sketches are kept (the idlest goes first).
 */
export class HotKeysBoard {
  private readonly list = new Map<HotKeys, string>();
  constructor(
    private readonly max = 512,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds a sketch (a Deduplicator's, of `service`). */
  add(service: string, h: HotKeys): HotKeys {
    this.prune();
    if (this.list.size >= this.max) {
      const idlest = [...this.list.keys()].sort((a, b) => a.lastAt - b.lastAt)[0];
      if (idlest) this.list.delete(idlest);
    }
    this.list.set(h, service);
    return h;
  }

  private prune(): void {
    const t = this.now();
    for (const h of this.list.keys()) if (h.lastAt > 0 && t - h.lastAt > 2 * h.options.windowMs) this.list.delete(h);
  }

  /** The live sketches of a service. */
  sketches(service: string): HotKeys[] {
    this.prune();
    return [...this.list].flatMap(([h, s]) => (s === service ? [h] : []));
  }

  /** One handler's table over every sketch of the process (its replicas' Deduplicators). */
  top(service: string, handler: string): HotKeyTable | undefined {
    return mergeHotKeys(handler, this.sketches(service));
  }
}

/** The process-wide board (kept on `globalThis`). */
export function hotKeysBoard(): HotKeysBoard {
  const g = globalThis as typeof globalThis & { __dedupHotKeysBoard?: HotKeysBoard };
  g.__dedupHotKeysBoard ??= new HotKeysBoard();
  return g.__dedupHotKeysBoard;
}
