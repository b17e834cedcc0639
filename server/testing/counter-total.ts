/** A prom-client counter or gauge as the tests read it. */
export type Counter = { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> };

/** The sum of `c`'s series whose labels pass `filter` (all of them by default). */
export const counterTotal = async (c: Counter, filter: (l: Record<string, unknown>) => boolean = () => true): Promise<number> =>
  (await c.get()).values.filter((v) => filter(v.labels)).reduce((a, v) => a + v.value, 0);
