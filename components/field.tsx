/** The look of a form control (select, input, textarea) on every page; add a width where one is needed. */
export const FIELD_CLASS =
  "rounded border border-slate-300 bg-white px-2 py-1 text-sm focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-700 dark:bg-slate-900";

/** One choice of a {@link LabeledSelect}: the value it sets and the text it shows. */
export interface SelectOption<V extends string> {
  value: V;
  label: string;
}

/** Props of {@link LabeledSelect}. */
export interface LabeledSelectProps<V extends string> {
  label: string;
  testId: string;
  value: V;
  options: readonly SelectOption<V>[];
  onChange: (value: V) => void;
  /** @default false */
  disabled?: boolean;
  /** The label above the select (a form's fields) instead of beside it (a toolbar). @default false */
  stacked?: boolean;
}

/** A `<select>` inside its label, each option shown by its text; every page's selects are this one. */
export function LabeledSelect<V extends string>({
  label,
  testId,
  value,
  options,
  onChange,
  disabled = false,
  stacked = false,
}: LabeledSelectProps<V>) {
  return (
    <label className={stacked ? "flex flex-col text-sm" : "flex items-center gap-2 text-sm"}>
      <span>{label}</span>
      <select
        data-testid={testId}
        disabled={disabled}
        value={value}
        onChange={(e) => onChange(e.target.value as V)}
        className={FIELD_CLASS}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
