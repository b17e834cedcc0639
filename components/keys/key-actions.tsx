"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { DEDUP_KEY_SEGMENT } from "@/names/dedup";
import { KEY_STATE_LABELS } from "@/lib/api/common";
import { keySelectionSchema } from "@/lib/api/key-actions";
import { ApiError } from "@/lib/query-options";
import { forgetKeys, setKeysTtl } from "@/lib/record-queries";
import { FIELD_CLASS, LabeledSelect, type SelectOption } from "../field";
import { Panel } from "../panel";
import { TokenField } from "../workshop/token-field";
import { needsToken, useWorkshopToken } from "../workshop/token";

const btn = "rounded px-3 py-1 text-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40";

/** `<service>:dedup:<handler>` → its two names (null for a prefix of another shape). */
export function ownerOfPrefix(prefix: string): { service: string; handler: string } | null {
  const mid = `:${DEDUP_KEY_SEGMENT}:`;
  const at = prefix.indexOf(mid);
  return at > 0 ? { service: prefix.slice(0, at), handler: prefix.slice(at + mid.length) } : null;
}

type ActionKind = "forget" | "ttl";

const ACTION_CHOICES: readonly SelectOption<ActionKind>[] = [
  { value: "forget", label: "forget (UNLINK)" },
  { value: "ttl", label: "set TTL" },
];

/** The key states an action may be limited to (`""`: any). */
const STATE_CHOICES = [{ value: "", label: "any" }, ...keySelectionSchema.shape.state.unwrap().options.map((s) => ({ value: s, label: KEY_STATE_LABELS[s] }))];

/** The form as typed: the action, the pasted UUIDs, the state filter and the minutes. */
interface ActionForm {
  action: ActionKind;
  uuids: string;
  state: string;
  idleMin: string;
  ttlMin: string;
}

const EMPTY_FORM: ActionForm = { action: "forget", uuids: "", state: "", idleMin: "", ttlMin: "60" };

interface Outcome {
  dryRun: boolean;
  matched: number;
  changed: number;
  complete: boolean;
  note?: string;
}

/** The request of the form's action for one handler: only the filters filled in are sent. */
function actionBody(owner: { service: string; handler: string } | null, f: ActionForm, dryRun: boolean) {
  const list = f.uuids.split(/[\s,]+/).filter(Boolean);
  return {
    ...owner,
    ...(list.length ? { uuids: list } : {}),
    ...(f.state ? { state: f.state } : {}),
    ...(Number(f.idleMin) > 0 ? { olderThanMs: Math.round(Number(f.idleMin) * 60_000) } : {}),
    ...(f.action === "ttl" ? { ttlMs: Math.round(Number(f.ttlMin) * 60_000) } : {}),
    dryRun,
  };
}

/**
 * Runs the form's action, dry (`mutate(true)`) or real (`mutate(false)`), and keeps its outcome; a
 * real run refetches the prefix's keys, a refused token shows the token field.
 */
function useKeyAction(prefix: string, form: ActionForm, tok: ReturnType<typeof useWorkshopToken>) {
  const qc = useQueryClient();
  const [out, setOut] = useState<Outcome | null>(null);
  const owner = ownerOfPrefix(prefix);
  const m = useMutation({
    mutationFn: async (dryRun: boolean): Promise<Outcome> => {
      if (form.action === "forget") {
        const r = await forgetKeys(actionBody(owner, form, dryRun), tok.token);
        return { dryRun: r.dryRun, matched: r.matched, changed: r.deleted, complete: r.complete };
      }
      const r = await setKeysTtl(actionBody(owner, form, dryRun), tok.token);
      return { dryRun: r.dryRun, matched: r.matched, changed: r.changed, complete: r.complete, note: `handler's TTL policy ${Math.round(r.policyMs / 60_000)} min (${r.policySource})` };
    },
    onSuccess: (r) => {
      setOut(r);
      if (!r.dryRun) void qc.invalidateQueries({ queryKey: ["keys", prefix] });
    },
    onError: (e) => {
      if (needsToken(e)) tok.show();
    },
  });
  return { m, out, clear: () => setOut(null) };
}

/** The action, its filters and the UUIDs; every edit calls `edit` with the fields changed. */
function ActionFields({ form, edit }: { form: ActionForm; edit: (change: Partial<ActionForm>) => void }) {
  return (
    <>
      <div className="flex flex-wrap items-end gap-2 text-sm">
        <LabeledSelect stacked label="Action" testId="action-kind" value={form.action} options={ACTION_CHOICES} onChange={(action) => edit({ action })} />
        <LabeledSelect stacked label="State" testId="action-state" value={form.state} options={STATE_CHOICES} onChange={(state) => edit({ state })} />
        <label className="flex flex-col">
          <span>Idle ≥ (min)</span>
          <input value={form.idleMin} onChange={(e) => edit({ idleMin: e.target.value })} inputMode="numeric" className={`w-24 ${FIELD_CLASS}`} />
        </label>
        {form.action === "ttl" ? (
          <label className="flex flex-col">
            <span>TTL (min)</span>
            <input value={form.ttlMin} onChange={(e) => edit({ ttlMin: e.target.value })} inputMode="numeric" className={`w-24 ${FIELD_CLASS}`} />
          </label>
        ) : null}
      </div>
      <label className="mt-2 flex flex-col text-sm">
        <span>Message UUIDs (one per line or comma-separated; empty = every key matching the state and idle time)</span>
        <textarea data-testid="action-uuids" value={form.uuids} onChange={(e) => edit({ uuids: e.target.value })} rows={3} className={`font-mono ${FIELD_CLASS}`} />
      </label>
    </>
  );
}

/** What the last run found (dry) or did (real), and whether one call's bound stopped it. */
function ActionOutcome({ out, action }: { out: Outcome; action: ActionKind }) {
  return (
    <p className="mt-2 text-sm" data-testid="action-result" role="status">
      {out.dryRun ? `Dry run: ${out.matched} key${out.matched === 1 ? "" : "s"} match` : `${out.changed} of ${out.matched} key${out.matched === 1 ? "" : "s"} ${action === "forget" ? "deleted" : "changed"}`}
      {out.complete ? "" : " (a bound of one call stopped it: run it again for the rest)"}
      {out.note ? `; ${out.note}` : ""}.
    </p>
  );
}

/**
 * Forget keys or set their TTL, for one handler: the UUIDs pasted, or every key (of a state,
 * idle for at least N minutes). A dry run first (the default); the real action asks for
 * confirmation with the count the dry run found.
 */
export function KeyActions({ prefix }: { prefix: string }) {
  const tok = useWorkshopToken();
  const [form, setForm] = useState(EMPTY_FORM);
  const { m, out, clear } = useKeyAction(prefix, form, tok);
  if (!ownerOfPrefix(prefix)) return null;
  const edit = (change: Partial<ActionForm>) => {
    clear();
    setForm((f) => ({ ...f, ...change }));
  };
  const verb = form.action === "forget" ? "Delete" : "Set the TTL of";
  const real = () => {
    if (out?.dryRun && window.confirm(`${verb} ${out.matched} key${out.matched === 1 ? "" : "s"} of ${prefix}?`)) m.mutate(false);
  };
  return (
    <Panel title="Act on keys" description="Forget keys (their messages are processed again when replayed) or set their TTL. Dry run first; the real action asks for confirmation with the count." testId="key-actions">
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <ActionFields form={form} edit={edit} />
      <div className="mt-2 flex flex-wrap gap-2">
        <button type="button" data-testid="action-dry" onClick={() => m.mutate(true)} disabled={m.isPending} className={`${btn} border border-slate-300 hover:bg-slate-100 dark:border-slate-700 dark:hover:bg-slate-800`}>
          Dry run
        </button>
        <button type="button" data-testid="action-real" onClick={real} disabled={m.isPending || !out?.dryRun || out.matched === 0} className={`${btn} bg-red-700 text-white hover:bg-red-800`}>
          {verb} {out?.dryRun ? out.matched : ""} keys
        </button>
      </div>
      {m.isError ? <p className="mt-2 text-sm text-red-700 dark:text-red-300">{m.error instanceof ApiError ? m.error.detail : String(m.error)}</p> : null}
      {out ? <ActionOutcome out={out} action={form.action} /> : null}
    </Panel>
  );
}
