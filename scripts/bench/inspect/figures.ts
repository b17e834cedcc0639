/** What a step of bench:inspect adds: the figures (rows of bench-results.json) and their details. */
export interface InspectFigures {
  results: Record<string, number>;
  details: Record<string, unknown>;
}

/** A count with thousands separators and `d` decimals, as the bench prints it. */
export const fmt = (n: number, d = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
