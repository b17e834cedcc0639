"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { DEDUP_KEY_SEGMENT } from "@/names/keys";
import type { ListedKey, Selection } from "@/lib/api/key-actions";
import { ApiError } from "@/lib/query-options";
import { forgetKeys, setKeysTtl } from "@/lib/record-queries";
import { useHydrated } from "../hydrated";
import { useWriteBlocked } from "../whoami";
import { Panel } from "../panel";
import { TokenField } from "../workshop/token-field";
import { needsToken, useWorkshopToken } from "../workshop/token";
import {
  ActionFields,
  EMPTY_FORM,
  hasSelection,
  uuidList,
  type ActionForm,
  type ActionKind,
} from "./key-action-fields";
import { KeyActionList } from "./key-action-list";
import { clockOf, confirmText, selectionWords } from "./key-action-words";

const btn =
  "rounded px-3 py-1 text-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40";

/**
 * `<service>:dedup:<handler>` → its two names (null for a prefix of another shape). The form the
 * handler page shows, with the separator after it (`…:<handler>:`), is the same prefix.
 */
export function ownerOfPrefix(prefix: string): { service: string; handler: string } | null {
  const p = prefix.trim().replace(/:+$/, "");
  const mid = `:${DEDUP_KEY_SEGMENT}:`;
  const at = p.indexOf(mid);
  const handler = p.slice(at + mid.length);
  return at > 0 && handler !== "" && !handler.includes(":") ? { service: p.slice(0, at), handler } : null;
}

interface Outcome {
  dryRun: boolean;
  matched: number;
  changed: number;
  skipped: number;
  complete: boolean;
  selection: Selection;
  previewId: string | null;
  previewAt: string;
  keys: ListedKey[];
  liveLeasesLeft: number;
  note?: string;
}

/** The request of the form's action for one handler: only the filters filled in are sent; a real action sends its dry run's previewId. */
function actionBody(
  owner: { service: string; handler: string } | null,
  f: ActionForm,
  dryRun: boolean,
  previewId: string | null,
) {
  const list = uuidList(f);
  return {
    ...owner,
    ...(list.length ? { uuids: list } : {}),
    ...(f.state ? { state: f.state } : {}),
    ...(Number(f.idleMin) > 0 ? { olderThanMs: Math.round(Number(f.idleMin) * 60_000) } : {}),
    ...(f.action === "ttl" ? { ttlMs: Math.round(Number(f.ttlMin) * 60_000) } : {}),
    leases: f.liveLeases ? "all" : "dead",
    ...(!dryRun && previewId ? { previewId } : {}),
    dryRun,
  };
}

/**
 * Runs the form's action, dry (`mutate(null)`) or real (`mutate(previewId)`), and keeps its outcome; a
 * real run refetches the prefix's keys, a refused token shows the token field.
 */
function useKeyAction(prefix: string, form: ActionForm, tok: ReturnType<typeof useWorkshopToken>) {
  const qc = useQueryClient();
  const [out, setOut] = useState<Outcome | null>(null);
  const owner = ownerOfPrefix(prefix);
  const m = useMutation({
    mutationFn: async (previewId: string | null): Promise<Outcome> => {
      const body = actionBody(owner, form, previewId === null, previewId);
      if (form.action === "forget") {
        const r = await forgetKeys(body, tok.token);
        return { ...r, changed: r.deleted };
      }
      const r = await setKeysTtl(body, tok.token);
      return {
        ...r,
        note: [r.note, `handler's TTL policy ${Math.round(r.policyMs / 60_000)} min (${r.policySource})`]
          .filter(Boolean)
          .join("; "),
      };
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

/** What the last run found (dry) or did (real), restating its selection, and whether one call's bound stopped it. */
function ActionOutcome({ out, action }: { out: Outcome; action: ActionKind }) {
  const s = out.matched === 1 ? "" : "s";
  const what = out.dryRun
    ? `Dry run: ${out.matched} key${s} match (${selectionWords(out.selection)}) at ${clockOf(out.previewAt)}`
    : `${out.changed} of ${out.matched} key${s} ${action === "forget" ? "deleted" : "changed"}${out.skipped ? `, ${out.skipped} skipped (changed since the dry run)` : ""}`;
  return (
    <div className="mt-2 text-sm">
      <p data-testid="action-result" role="status">
        {what}
        {out.liveLeasesLeft
          ? `; ${out.liveLeasesLeft} lease${out.liveLeasesLeft === 1 ? "" : "s"} of live or unknown owners left out`
          : ""}
        {out.complete ? "" : " (a bound of one call stopped it: run it again for the rest)"}
        {out.note ? `; ${out.note}` : ""}.
      </p>
      <KeyActionList keys={out.keys} matched={out.dryRun ? out.matched : out.changed} />
    </div>
  );
}

/**
 * Forget keys or set their TTL, for one handler: the UUIDs pasted, or the keys of a chosen state
 * (idle for at least N minutes). A dry run first lists what matches; the real action, confirmed in
 * words that restate the selection, acts on exactly the keys that dry run listed.
 */
export function KeyActions({ prefix }: { prefix: string }) {
  const tok = useWorkshopToken();
  const ready = useHydrated();
  const [form, setForm] = useState(EMPTY_FORM);
  const { m, out, clear } = useKeyAction(prefix, form, tok);
  const blocked = useWriteBlocked(ownerOfPrefix(prefix)?.service);
  if (!ownerOfPrefix(prefix)) return null;
  const edit = (change: Partial<ActionForm>) => {
    clear();
    setForm((f) => ({ ...f, ...change }));
  };
  const verb = form.action === "forget" ? "Delete" : "Set the TTL of";
  const real = () => {
    if (
      out?.dryRun &&
      out.previewId &&
      window.confirm(confirmText(verb, out.matched, prefix, out.selection, out.previewAt))
    )
      m.mutate(out.previewId);
  };
  return (
    <Panel
      title="Act on keys"
      description="Forget keys (their messages are processed again when replayed) or set their TTL. Choose a state or paste UUIDs, run a dry run: the real action acts on exactly the keys it listed."
      testId="key-actions"
    >
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <ActionFields form={form} edit={edit} ready={ready} />
      <div className="mt-2 flex flex-wrap gap-2">
        <button
          type="button"
          data-testid="action-dry"
          onClick={() => m.mutate(null)}
          disabled={!ready || m.isPending || !hasSelection(form) || blocked !== null}
          title={blocked ?? undefined}
          className={`${btn} border border-slate-300 hover:bg-slate-100 dark:border-slate-700 dark:hover:bg-slate-800`}
        >
          Dry run
        </button>
        <button
          type="button"
          data-testid="action-real"
          onClick={real}
          disabled={!ready || m.isPending || !out?.dryRun || !out.previewId || out.matched === 0 || blocked !== null}
          title={blocked ?? undefined}
          className={`${btn} bg-red-700 text-white hover:bg-red-800`}
        >
          {verb} {out?.dryRun ? out.matched : ""} keys
        </button>
      </div>
      {blocked ? (
        <p className="mt-2 text-xs text-slate-500 dark:text-slate-400" data-testid="action-blocked">
          {blocked}
        </p>
      ) : null}
      {!hasSelection(form) ? (
        <p className="mt-2 text-xs text-slate-500 dark:text-slate-400">
          Choose a state (any state for every key) or paste UUIDs to run a dry run.
        </p>
      ) : null}
      {m.isError ? (
        <p className="mt-2 text-sm text-red-700 dark:text-red-300" data-testid="action-error">
          {m.error instanceof ApiError ? m.error.detail : String(m.error)}
        </p>
      ) : null}
      {out ? <ActionOutcome out={out} action={form.action} /> : null}
    </Panel>
  );
}
