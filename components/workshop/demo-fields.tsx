"use client";

/** The two controls of the live demo panels: an on/off switch and a number field applied on Enter or blur. */
import { useState } from "react";

/** An accessible on/off switch. */
export function Switch({
  label,
  on,
  onChange,
  disabled,
  testId,
  hint,
}: {
  label: string;
  on: boolean;
  onChange: (v: boolean) => void;
  disabled?: boolean;
  testId?: string;
  hint?: string;
}) {
  return (
    <div className="flex items-center justify-between gap-3 py-1">
      <span className="text-lg">
        <span id={`${testId}-l`}>{label}</span>
        {hint ? <span className="block text-base text-slate-600 dark:text-slate-400">{hint}</span> : null}
      </span>
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-labelledby={`${testId}-l`}
        data-testid={testId}
        disabled={disabled}
        onClick={() => onChange(!on)}
        className={`relative h-7 w-12 shrink-0 rounded-full transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40 ${on ? "bg-blue-600" : "bg-slate-300 dark:bg-slate-600"}`}
      >
        <span
          aria-hidden
          className={`absolute top-0.5 h-6 w-6 rounded-full bg-white shadow transition-all ${on ? "left-5" : "left-0.5"}`}
        />
      </button>
    </div>
  );
}

/**
 * A number field applied on Enter or blur. A value outside [min, max] is not sent: the field keeps
 * it and says the range (the API would refuse it too).
 */
export function NumberField({
  label,
  value,
  unit,
  min,
  max,
  step,
  onApply,
  testId,
}: {
  label: string;
  value: number;
  unit: string;
  min: number;
  max: number;
  step: number;
  onApply: (v: number) => void;
  testId: string;
}) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const apply = () => {
    if (text === null) return;
    const v = Number(text);
    if (text.trim() === "" || !Number.isFinite(v) || v < min || v > max) {
      setError(
        `${label}: ${text.trim() || "empty"} is outside ${min}–${max} ${unit}; not applied (still ${value} ${unit}).`,
      );
      return;
    }
    setError(null);
    setText(null);
    if (v !== value) onApply(v);
  };
  return (
    <div className="py-1">
      <label className="flex items-center justify-between gap-3 text-lg">
        <span>
          {label}{" "}
          <span className="text-base text-slate-600 dark:text-slate-400">
            ({min}–{max})
          </span>
        </span>
        <span className="flex items-center gap-1">
          <input
            data-testid={testId}
            type="number"
            min={min}
            max={max}
            step={step}
            value={text ?? String(value)}
            onChange={(e) => setText(e.target.value)}
            onBlur={apply}
            onKeyDown={(e) => e.key === "Enter" && apply()}
            aria-invalid={error !== null}
            className="w-24 rounded border border-slate-300 bg-white px-2 py-0.5 text-right tabular-nums aria-invalid:border-red-600 dark:border-slate-700 dark:bg-slate-900"
          />
          <span className="w-14 text-base text-slate-600 dark:text-slate-400">{unit}</span>
        </span>
      </label>
      {error ? (
        <p role="alert" data-testid={`${testId}-error`} className="text-base text-red-700 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </div>
  );
}
