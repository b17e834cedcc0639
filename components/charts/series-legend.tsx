/** One line of a chart's legend: the line's colour, its name, and what it counts. */
export interface LegendEntry {
  name: string;
  color: string;
  text: string;
}

/** What each line of a chart means, below the chart: a swatch of its colour, its name and a sentence. */
export function SeriesLegend({ entries, testId }: { entries: readonly LegendEntry[]; testId: string }) {
  return (
    <dl data-testid={testId} className="mt-2 space-y-1 text-xs text-slate-600 dark:text-slate-300">
      {entries.map((l) => (
        <div key={l.name} className="flex gap-2">
          <dt className="shrink-0 font-medium">
            <span
              aria-hidden
              className="mr-1 inline-block h-2 w-3 rounded-sm align-middle"
              style={{ background: l.color }}
            />
            {l.name}
          </dt>
          <dd>{l.text}</dd>
        </div>
      ))}
    </dl>
  );
}
