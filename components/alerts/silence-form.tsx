"use client";

import { useId, useState } from "react";
import { matchersText, silenceMatchersOf } from "@/lib/api/silences";
import { useWriteBlocked } from "../whoami";
import { MutationError, TokenField } from "../workshop/token-field";
import { useSilenceWrites } from "./silence-writes";

/** Durations offered for a silence, minutes. */
const DURATIONS = [
  { minutes: 30, label: "30 min" },
  { minutes: 60, label: "1 h" },
  { minutes: 120, label: "2 h" },
  { minutes: 240, label: "4 h" },
  { minutes: 1440, label: "1 day" },
];

/** Props of {@link SilenceForm}: what the silence matches, and how the button reads. */
export interface SilenceFormProps {
  alertname: string;
  service: string;
  handler?: string;
  /** The alert instance's labels: every identifying one (`reason`, `topic`…) becomes a matcher too, so the silence mutes this instance only. */
  labels?: Record<string, string>;
  /** The button that opens the form, e.g. "Silence…" or "Silence during this replay". */
  label: string;
  /** Prefilled comment (Alertmanager requires one). */
  comment?: string;
  testId?: string;
}

/**
 * A button that opens a small form creating an Alertmanager silence of `{alertname, service[,
 * handler]}` and the instance's other identifying `labels` from now: duration and comment. The
 * form shows the matchers it will create. The request goes through the app's access rule.
 */
export function SilenceForm({ alertname, service, handler, labels, label, comment = "", testId }: SilenceFormProps) {
  const [open, setOpen] = useState(false);
  const [minutes, setMinutes] = useState(60);
  const [text, setText] = useState(comment);
  const { create, tok } = useSilenceWrites();
  const id = useId();
  const blocked = useWriteBlocked(service);
  if (!open) {
    return (
      <button
        type="button"
        data-testid={testId}
        onClick={() => setOpen(true)}
        disabled={blocked !== null}
        title={blocked ?? undefined}
        className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 disabled:opacity-50 dark:border-slate-700 dark:hover:bg-slate-800"
      >
        {label}
      </button>
    );
  }
  const target = `{${matchersText(silenceMatchersOf({ alertname, service, ...(handler ? { handler } : {}), ...(labels ? { labels } : {}) }))}}`;
  return (
    <form
      data-testid={testId ? `${testId}-form` : undefined}
      aria-label={`Silence ${target}`}
      className="mt-1 space-y-1 rounded border border-slate-200 p-2 text-xs dark:border-slate-700"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate(
          {
            alertname,
            service,
            ...(handler ? { handler } : {}),
            ...(labels ? { labels } : {}),
            durationMinutes: minutes,
            comment: text,
          },
          { onSuccess: () => setOpen(false) },
        );
      }}
    >
      <p className="font-mono" data-testid="silence-target">
        {target}
      </p>
      <SilenceFields id={id} minutes={minutes} setMinutes={setMinutes} text={text} setText={setText} />
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <div className="flex gap-2">
        <button
          type="submit"
          data-testid="silence-submit"
          disabled={create.isPending}
          className="rounded bg-slate-800 px-2 py-0.5 text-white disabled:opacity-50 dark:bg-slate-200 dark:text-slate-900"
        >
          Create silence
        </button>
        <button type="button" onClick={() => setOpen(false)} className="underline">
          Cancel
        </button>
      </div>
      <MutationError error={create.error} />
    </form>
  );
}

/** The form's duration (one of {@link DURATIONS}) and its comment, both required by Alertmanager. */
function SilenceFields({
  id,
  minutes,
  setMinutes,
  text,
  setText,
}: {
  id: string;
  minutes: number;
  setMinutes: (m: number) => void;
  text: string;
  setText: (t: string) => void;
}) {
  return (
    <>
      <label className="mr-2" htmlFor={`${id}-d`}>
        for
      </label>
      <select
        id={`${id}-d`}
        data-testid="silence-duration"
        value={minutes}
        onChange={(e) => setMinutes(Number(e.target.value))}
        className="rounded border border-slate-300 bg-transparent dark:border-slate-700"
      >
        {DURATIONS.map((d) => (
          <option key={d.minutes} value={d.minutes}>
            {d.label}
          </option>
        ))}
      </select>
      <label className="block" htmlFor={`${id}-c`}>
        Why (shown in Alertmanager)
      </label>
      <input
        id={`${id}-c`}
        data-testid="silence-comment"
        required
        maxLength={500}
        value={text}
        onChange={(e) => setText(e.target.value)}
        className="w-full rounded border border-slate-300 bg-transparent px-1 dark:border-slate-700"
      />
    </>
  );
}
