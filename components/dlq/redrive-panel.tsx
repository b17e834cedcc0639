"use client";

import { useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "@/lib/query-options";
import { redrive } from "@/lib/record-queries";
import type { RedriveResponse } from "@/lib/api/dlq";
import { POISON_REASON_CLASS } from "@/names/dedup";
import { REDRIVE_MODE, type RedriveMode } from "@/names/dlq";
import { useHydrated } from "../hydrated";
import { Panel } from "../panel";
import { TokenField } from "../workshop/token-field";
import { needsToken, useWorkshopToken } from "../workshop/token";

const btn =
  "rounded px-3 py-1 text-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40";

/** The panel's choice: a mode for every record, or each record's default (`per-record`). */
type ModeChoice = RedriveMode | "per-record";

/** Each choice in words: the option label, and how the confirmation restates it. */
const MODE_WORDS: Record<ModeChoice, { label: string; says: string }> = {
  "per-record": {
    label: "Per record: new UUID for payload conflicts, same UUID for the others",
    says: "each with its own UUID, except payload conflicts, which get a new UUID",
  },
  [REDRIVE_MODE.sameUuid]: {
    label: "Same UUID (the same event again; payload conflicts are refused: they would loop)",
    says: "with the same UUID (payload conflicts are skipped: they would loop)",
  },
  [REDRIVE_MODE.newUuid]: {
    label: "New UUID (derived from the DLQ position; the original kept in redriven_from_uuid)",
    says: "with a new UUID each (derived from its DLQ position; the original UUID kept in the redriven_from_uuid header)",
  },
};

/**
 * What the confirmation asks: the selection (`what`: the filter in words, "" for every record), how
 * many, the mode and the rate, in words.
 */
export function confirmText(what: string, p: RedriveResponse, mode: ModeChoice): string {
  const n = p.matched;
  const secs = Math.ceil(n / p.ratePerSecond);
  return [
    `Re-drive ${n} message${n === 1 ? "" : "s"} from the DLQ${what ? `, matching ${what},` : ""} back to their original topics,`,
    `${MODE_WORDS[mode].says}, keeping each record's Kafka key (its partition),`,
    `at most ${p.ratePerSecond} per second (about ${secs} s)?`,
    p.skipped
      ? `${p.skipped} matched record${p.skipped === 1 ? " is" : "s are"} skipped (see the preview for why).`
      : "",
    p.notOpen ? `${p.notOpen} already re-driven or discarded ${p.notOpen === 1 ? "is" : "are"} left alone.` : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/**
 * After an answer: it becomes the panel's result, and after a real re-drive the DLQ list is read
 * again, so the records just re-driven show as such instead of the same rows unmarked.
 */
export function afterRedrive(client: QueryClient, r: RedriveResponse, show: (r: RedriveResponse) => void): void {
  show(r);
  if (!r.dryRun) void client.invalidateQueries({ queryKey: ["dlq"] });
}

/** The panel's description: which records go where ("" for `what`: every record), in words. */
export function redriveDescription(what: string): string {
  return `Publishes ${what ? `the DLQ records matching ${what}` : "every DLQ record"} back to the topic it was poisoned on (its topic_poisoned header; consumer topics only) with its Kafka key, poison headers removed.`;
}

/** The UUID mode of a re-drive, and for payload conflicts why a new UUID is preselected. */
function ModeField({
  mode,
  conflicts,
  disabled,
  onChange,
}: {
  mode: ModeChoice;
  conflicts: boolean;
  disabled: boolean;
  onChange: (mode: ModeChoice) => void;
}) {
  return (
    <>
      <label className="mb-2 block text-sm">
        UUID{" "}
        <select
          data-testid="redrive-mode"
          value={mode}
          disabled={disabled}
          onChange={(e) => onChange(e.target.value as ModeChoice)}
          className="rounded border border-slate-300 bg-transparent px-1 dark:border-slate-700"
        >
          {(Object.keys(MODE_WORDS) as ModeChoice[]).map((k) => (
            <option key={k} value={k}>
              {MODE_WORDS[k].label}
            </option>
          ))}
        </select>
      </label>
      {conflicts ? (
        <p className="mb-2 text-xs text-slate-600 dark:text-slate-400" data-testid="redrive-conflict-note">
          A payload conflict's UUID is already done with another payload: re-driven with the same UUID it would conflict
          again and come back here. A new UUID, derived from the record&apos;s DLQ position, makes it a new event;
          re-driving it twice gives the same new UUID, which the Deduplicator then swallows.
        </p>
      ) : null}
    </>
  );
}

/**
 * Re-drive of the DLQ records matching the page's filter: the mode (new UUID preselected, and
 * explained, for payload conflicts), a dry run first (what would be sent, as which UUID, what is
 * skipped and why), then the real action, whose confirmation restates the selection, the count,
 * the mode and the rate. Changing the mode asks for a new dry run.
 */
export function RedrivePanel({ filter }: { filter: { handler?: string; reason?: string } }) {
  const tok = useWorkshopToken();
  const hydrated = useHydrated();
  const conflicts = filter.reason === POISON_REASON_CLASS.payloadConflict;
  const [mode, setMode] = useState<ModeChoice>(conflicts ? REDRIVE_MODE.newUuid : "per-record");
  const [preview, setPreview] = useState<RedriveResponse | null>(null);
  const client = useQueryClient();
  const m = useMutation({
    // The real run sends the dry run's previewId: it re-drives exactly the records the preview showed.
    mutationFn: (dryRun: boolean) =>
      redrive(
        {
          filter,
          dryRun,
          ...(mode === "per-record" ? {} : { mode }),
          ...(!dryRun && preview?.previewId ? { previewId: preview.previewId } : {}),
        },
        tok.token,
      ),
    onSuccess: (r) => afterRedrive(client, r, setPreview),
    onError: (e) => {
      if (needsToken(e)) tok.show();
    },
  });
  const what = [filter.handler ? `handler ${filter.handler}` : null, filter.reason ? `reason ${filter.reason}` : null]
    .filter(Boolean)
    .join(", ");
  const real = () => {
    if (!preview || preview.matched === 0) return;
    if (window.confirm(confirmText(what, preview, mode))) m.mutate(false);
  };
  return (
    <Panel title="Re-drive" description={redriveDescription(what)} testId="redrive">
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <ModeField
        mode={mode}
        conflicts={conflicts}
        disabled={!hydrated || m.isPending}
        onChange={(next) => {
          setMode(next);
          setPreview(null); // the real action is bound to a dry run of this mode
        }}
      />
      <div className="flex flex-wrap gap-2">
        <button
          type="button"
          data-testid="redrive-dry"
          onClick={() => m.mutate(true)}
          disabled={!hydrated || m.isPending}
          className={`${btn} border border-slate-300 hover:bg-slate-100 dark:border-slate-700 dark:hover:bg-slate-800`}
        >
          Preview (dry run)
        </button>
        <button
          type="button"
          data-testid="redrive-real"
          onClick={real}
          disabled={!hydrated || m.isPending || !preview?.dryRun || preview.matched === 0}
          className={`${btn} bg-red-700 text-white hover:bg-red-800`}
        >
          Re-drive {preview?.dryRun ? preview.matched : ""}
        </button>
      </div>
      {m.isError ? (
        <p className="mt-2 text-sm text-red-700 dark:text-red-300">
          {m.error instanceof ApiError ? m.error.detail : String(m.error)}
        </p>
      ) : null}
      {preview ? <RedriveResult r={preview} /> : null}
    </Panel>
  );
}

/**
 * The counts of a dry run or a re-drive in words, every matched record counted once: "would
 * re-drive 3 of 5 matched, at most 50/s; 2 cannot be re-driven: no UUID", and when none can,
 * "5 matched, none can be re-driven: no UUID" (not "0 of 0 matched" beside 5 rows).
 */
export function redriveCounts(r: RedriveResponse): string {
  const total = r.matched + r.skipped;
  const whys = [...new Set(r.skippedPreview.map((s) => s.why))].slice(0, 3).join("; ");
  const cannot = r.skipped ? `${whys ? `: ${whys}` : ""}` : "";
  const head = r.dryRun ? "Dry run: " : "";
  if (total === 0) return `${head}nothing matched`;
  if (r.matched === 0) return `${head}${total} matched, none can be re-driven${cannot}`;
  const sent = r.dryRun ? `would re-drive ${r.matched}` : `Re-drove ${r.redriven}`;
  return `${head}${sent} of ${total} matched, at most ${r.ratePerSecond}/s${r.skipped ? `; ${r.skipped} cannot be re-driven${cannot}` : ""}`;
}

/** A dry run's or a re-drive's answer: counts, the records sent (and as which UUID), those skipped and why. */
export function RedriveResult({ r }: { r: RedriveResponse }) {
  return (
    <div className="mt-3 text-sm" data-testid="redrive-result">
      <p>
        {redriveCounts(r)}
        {r.notOpen
          ? `; ${r.notOpen} left alone: already re-driven or discarded (name their UUIDs to send them again)`
          : ""}
        {r.complete ? "" : "; the scan bound stopped before the oldest records (run again for more)"}.
      </p>
      {r.preview.length ? (
        <ul className="mt-1 font-mono text-xs">
          {r.preview.map((p) => (
            <li key={`${p.partition}:${p.offset}`}>
              {p.uuid}
              {p.sendUuid !== p.uuid ? ` as new UUID ${p.sendUuid}` : ""} → {p.topic} ({p.handler}, {p.reasonClass})
            </li>
          ))}
        </ul>
      ) : null}
      {r.skippedPreview.length ? (
        <ul className="mt-1 text-xs text-amber-800 dark:text-amber-300" data-testid="redrive-skipped">
          {r.skippedPreview.map((s) => (
            <li key={`${s.partition}:${s.offset}`}>
              <span className="font-mono">{s.uuid ?? `offset ${s.partition}/${s.offset}`}</span> skipped: {s.why}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
