/**
 * How many record scans (a UUID search, a DLQ page: each reads up to 32 MiB from Kafka) run at
 * once. Without a bound, 50 concurrent anonymous searches read ~0.5 GB in 23 s and slowed every
 * other answer (`/api/health` p50 34 → 615 ms). Readers share {@link READER_SCANS_MAX} slots, one
 * two per client at a time; callers who may change state (an operator about to re-drive) have their own
 * {@link OPERATOR_SCANS_MAX}, so readers cannot starve them. Beyond: 429 with `Retry-After`.
 */
import { principalOf, servicesFor } from "@/server/auth/principal";
import { browseClient, RateLimitedError } from "@/server/http";

/** Record scans all readers may run at once. */
export const READER_SCANS_MAX = 4;
/** Record scans one reader (by client address) may run at once. */
export const READER_SCANS_PER_CLIENT = 2;
/** Record scans callers who may change state run at once, apart from the readers'. */
export const OPERATOR_SCANS_MAX = 4;

interface Slots {
  readers: number;
  operators: number;
  perClient: Map<string, number>;
}

type G = typeof globalThis & { __dedupHealthScanSlots?: Slots };

function slots(): Slots {
  const g = globalThis as G;
  return (g.__dedupHealthScanSlots ??= { readers: 0, operators: 0, perClient: new Map() });
}

/** The in-flight counts (tests, `/api/health`). */
export function scansInFlight(): { readers: number; operators: number } {
  const s = slots();
  return { readers: s.readers, operators: s.operators };
}

/** Runs `scan` in a slot of the caller's pool, or throws 429 when the pool (or the caller's share) is full. */
export async function withScanSlot<T>(req: Request, scan: () => Promise<T>): Promise<T> {
  const s = slots();
  const writes = servicesFor(await principalOf(req), "write");
  const operator = writes === "*" || writes.length > 0;
  if (operator) {
    if (s.operators >= OPERATOR_SCANS_MAX)
      throw new RateLimitedError(
        `${OPERATOR_SCANS_MAX} record scans of operators already run; try again in a second`,
        1,
      );
    s.operators++;
    try {
      return await scan();
    } finally {
      s.operators--;
    }
  }
  const client = browseClient(req);
  const mine = s.perClient.get(client) ?? 0;
  if (mine >= READER_SCANS_PER_CLIENT)
    throw new RateLimitedError(
      `a record scan of this client already runs (at most ${READER_SCANS_PER_CLIENT} at a time); try again when it answered`,
      1,
    );
  if (s.readers >= READER_SCANS_MAX)
    throw new RateLimitedError(
      `${READER_SCANS_MAX} record scans already run (every reader's share); try again in a second`,
      1,
    );
  s.readers++;
  s.perClient.set(client, mine + 1);
  try {
    return await scan();
  } finally {
    s.readers--;
    const n = (s.perClient.get(client) ?? 1) - 1;
    if (n <= 0) s.perClient.delete(client);
    else s.perClient.set(client, n);
  }
}
