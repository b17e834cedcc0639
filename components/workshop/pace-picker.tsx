"use client";

import { NARRATED_GAP_MS, type RunPace, type ScenarioInfo } from "@/lib/api/workshop";
import { formatDurationMs } from "@/lib/format";

/** What each pace does, for the picker and the scenario list. */
export const PACE_TEXT: Record<RunPace, { label: string; hint: string }> = {
  fast: { label: "Fast", hint: "each batch published at once, a run takes seconds" },
  narrated: {
    label: "Narrated",
    hint: `one message every ${NARRATED_GAP_MS / 1000} s, each delivery shown as it happens`,
  },
};

/** A scenario's bound at `pace`. */
export const boundAt = (s: Pick<ScenarioInfo, "maxDurationMs" | "narratedMaxDurationMs">, pace: RunPace) =>
  pace === "narrated" ? s.narratedMaxDurationMs : s.maxDurationMs;

/** The scenario list's line for `pace`: what a run does at that pace and the longest any may take. */
export function paceLine(scenarios: readonly ScenarioInfo[], pace: RunPace): string {
  const most = Math.max(...scenarios.map((s) => boundAt(s, pace)));
  return `${PACE_TEXT[pace].label} pace (${PACE_TEXT[pace].hint}): each run stopped after at most ${formatDurationMs(most)}`;
}

/** Fast or narrated, in projector-size type. */
export function PacePicker({ pace, onPace }: { pace: RunPace; onPace: (p: RunPace) => void }) {
  return (
    <fieldset className="flex flex-wrap items-center gap-x-4 gap-y-1 text-lg" data-testid="pace-picker">
      <legend className="sr-only">Pace of the run</legend>
      {(Object.keys(PACE_TEXT) as RunPace[]).map((p) => (
        <label key={p} className="flex cursor-pointer items-center gap-2" title={PACE_TEXT[p].hint}>
          <input
            type="radio"
            name="pace"
            value={p}
            checked={pace === p}
            onChange={() => onPace(p)}
            data-testid={`pace-${p}`}
            className="h-5 w-5"
          />
          {PACE_TEXT[p].label}
        </label>
      ))}
    </fieldset>
  );
}
