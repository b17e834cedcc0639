/** The fuzz's one source of randomness: mulberry32, seeded, so a failing run repeats with --seed. */
let seed = 0;

/** Starts the sequence over from `n` (the run's --seed). */
export function seedRandom(n: number): void {
  seed = n;
}

/** mulberry32: a seeded PRNG so a failing run can be repeated with --seed. */
export function rand(): number {
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** One of `xs`, uniformly. */
export const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
/** True with probability `p`. */
export const chance = (p: number) => rand() < p;
