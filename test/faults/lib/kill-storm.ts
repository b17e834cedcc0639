/**
 * The SIGKILL storm the consumer fault cases share: at points spread over the stream, a second
 * replica joins the group, the main consumer process is SIGKILLed (no commit, no release), a new
 * main starts, and the extra replica leaves gracefully — each kill a rebalance too.
 */
import { sleep } from "./procs";
import { waitUntil, type Worker } from "./stream";

/** Options of {@link killStorm}. */
export interface KillStormOptions {
  /** How many kill rounds. */
  kills: number;
  /** The stream's size, in the unit `progress` counts. */
  total: number;
  /** How far the consumers got (effects written, offsets committed…). */
  progress: () => Promise<number>;
  /** What `progress` counts, for the log line (`kill 3 at 4120 <unit>`). */
  unit: string;
  /** The running main consumer. */
  main: Worker;
  /** Starts a consumer process named `replica` (the case keeps it for its clean-up). */
  start: (replica: string) => Worker;
  /** Jitter the i-th kill point around i/(kills+2) of the stream by ± half a round; else exactly there. @default true */
  jitter?: boolean;
  /** How often `progress` is read while waiting for a kill point, ms. @default 250 */
  pollMs?: number;
  /** The kill comes within this long after the extra replica was started (uniformly), ms. @default 1500 */
  joinWithinMs?: number;
  /** The extra replica stays this long after the new main started: [at least, plus up to], ms. @default [500, 3000] */
  stayMs?: readonly [number, number];
}

/**
 * Runs the storm and resolves the log of its kills (`kill i at <progress> <unit> (pid …)`) and the
 * main consumer left running. Each kill point waits at most 120 s for `progress` (then kills anyway:
 * the case's own accounting names what stalled).
 */
export async function killStorm(o: KillStormOptions): Promise<{ log: string[]; main: Worker }> {
  const { kills, total } = o;
  const [stayMin, staySpread] = o.stayMs ?? [500, 3000];
  const round = total / (kills + 2);
  const log: string[] = [];
  let main = o.main;
  for (let i = 1; i <= kills; i++) {
    // Spread the faults over the stream: the i-th round starts near i/(kills+2) of it.
    const at = Math.round(round * i + (o.jitter === false ? 0 : (Math.random() - 0.5) * round));
    await waitUntil(async () => (await o.progress()) >= at, 120_000, o.pollMs ?? 250);
    const extra = o.start(`extra-${i}`); // join: a rebalance
    await sleep(Math.random() * (o.joinWithinMs ?? 1500));
    const reached = await o.progress();
    await main.kill9();
    log.push(`kill ${i} at ${reached} ${o.unit} (pid ${main.pid})`);
    main = o.start(`main-${i}`);
    await extra.ready.catch(() => undefined);
    await sleep(stayMin + Math.random() * staySpread);
    await extra.stop(); // leave
  }
  return { log, main };
}
