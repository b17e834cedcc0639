"use client";

/**
 * The key action form: what it holds as typed ({@link ActionForm}), whether it names a selection,
 * and its fields (action, state, idle minutes, TTL, live leases, UUIDs).
 */
import { FIELD_CLASS, LabeledSelect, type SelectOption } from "../field";

/** What the action does to the keys selected: delete them, or set their TTL. */
export type ActionKind = "forget" | "ttl";

const ACTION_CHOICES: readonly SelectOption<ActionKind>[] = [
  { value: "forget", label: "forget (delete)" },
  { value: "ttl", label: "set TTL" },
];

/** The states an action may select; none is chosen at first, and every key is a choice of its own ("any state"). */
const STATE_CHOICES: readonly SelectOption<string>[] = [
  { value: "", label: "choose…" },
  { value: "processing", label: "processing (leases)" },
  { value: "done", label: "done (every done form, and 1)" },
  { value: "any", label: "any state (every key)" },
];

/** The form as typed: the action, the pasted UUIDs, the state filter, the minutes, and whether live owners' leases may be selected. */
export interface ActionForm {
  action: ActionKind;
  uuids: string;
  state: string;
  idleMin: string;
  ttlMin: string;
  liveLeases: boolean;
}

/** The form as first shown: forget, nothing selected, a 60-minute TTL ready for "set TTL". */
export const EMPTY_FORM: ActionForm = {
  action: "forget",
  uuids: "",
  state: "",
  idleMin: "",
  ttlMin: "60",
  liveLeases: false,
};

/** The UUIDs pasted, split on whitespace and commas. */
export const uuidList = (f: ActionForm) => f.uuids.split(/[\s,]+/).filter(Boolean);
/** Whether the form names a selection: UUIDs, or a state chosen (never every key by default). */
export const hasSelection = (f: ActionForm) => uuidList(f).length > 0 || f.state !== "";

/** The action, its filters and the UUIDs; every edit calls `edit` with the fields changed. Disabled until hydrated: a choice made before would be lost. */
export function ActionFields({
  form,
  edit,
  ready,
}: {
  form: ActionForm;
  edit: (change: Partial<ActionForm>) => void;
  ready: boolean;
}) {
  return (
    <>
      <div className="flex flex-wrap items-end gap-2 text-sm">
        <LabeledSelect
          stacked
          label="Action"
          testId="action-kind"
          disabled={!ready}
          value={form.action}
          options={ACTION_CHOICES}
          onChange={(action) => edit({ action })}
        />
        <LabeledSelect
          stacked
          label="State"
          testId="action-state"
          disabled={!ready}
          value={form.state}
          options={STATE_CHOICES}
          onChange={(state) => edit({ state })}
        />
        <label className="flex flex-col">
          <span>Idle ≥ (min)</span>
          <input
            data-testid="action-idle"
            disabled={!ready}
            value={form.idleMin}
            onChange={(e) => edit({ idleMin: e.target.value })}
            inputMode="numeric"
            className={`w-24 ${FIELD_CLASS}`}
          />
        </label>
        {form.action === "ttl" ? (
          <label className="flex flex-col">
            <span>TTL (min)</span>
            <input
              disabled={!ready}
              value={form.ttlMin}
              onChange={(e) => edit({ ttlMin: e.target.value })}
              inputMode="numeric"
              className={`w-24 ${FIELD_CLASS}`}
            />
          </label>
        ) : null}
        <label className="flex items-center gap-1">
          <input
            type="checkbox"
            data-testid="action-live-leases"
            disabled={!ready}
            checked={form.liveLeases}
            onChange={(e) => edit({ liveLeases: e.target.checked })}
          />
          <span>include leases of live owners</span>
        </label>
      </div>
      <label className="mt-2 flex flex-col text-sm">
        <span>Message UUIDs (one per line or comma-separated; empty = the keys of the state chosen)</span>
        <textarea
          data-testid="action-uuids"
          disabled={!ready}
          value={form.uuids}
          onChange={(e) => edit({ uuids: e.target.value })}
          rows={3}
          className={`font-mono ${FIELD_CLASS}`}
        />
      </label>
    </>
  );
}
