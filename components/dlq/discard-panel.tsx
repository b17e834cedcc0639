"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { DiscardResponse, DlqEntry } from "@/lib/api/dlq";
import { ApiError, send } from "@/lib/query-options";
import { Panel } from "../panel";
import { useHydrated } from "../hydrated";
import { TokenField } from "../workshop/token-field";
import { needsToken, useWorkshopToken } from "../workshop/token";

const btn =
  "rounded px-3 py-1 text-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-40";

/** How one record reads in the confirmation: its position, UUID, handler and reason class. */
const recordLine = (e: DlqEntry) =>
  `${e.partition}/${e.offset} ${e.uuid ?? "(no UUID)"} ${e.handler || "?"} ${e.reasonClass}`;

/** The confirmation's text: what will be discarded, restated record by record (the first 10), and what discarding does. */
export function discardQuestion(topic: string, chosen: readonly DlqEntry[]): string {
  const list = chosen
    .slice(0, 10)
    .map((e) => `  ${recordLine(e)}`)
    .join("\n");
  const more = chosen.length > 10 ? `\n  … and ${chosen.length - 10} more` : "";
  return (
    `Discard ${chosen.length} open DLQ record${chosen.length === 1 ? "" : "s"} of ${topic} (partition/offset, UUID, handler, reason)?\n${list}${more}\n\n` +
    "They stay in the topic until retention but leave the backlog and are never re-driven by a filter. Why do they need no re-drive? (required)"
  );
}

/**
 * Discards the records ticked in the table: asks for the reason in a confirmation that restates
 * them, then marks them `discarded` (POST /api/dlq/discard with their positions; audited).
 */
export function DiscardPanel({
  topic,
  chosen,
  onDone,
}: {
  topic: string;
  chosen: readonly DlqEntry[];
  onDone: () => void;
}) {
  const hydrated = useHydrated();
  const tok = useWorkshopToken();
  const client = useQueryClient();
  const [done, setDone] = useState<DiscardResponse | null>(null);
  const m = useMutation({
    mutationFn: (why: string) =>
      send<DiscardResponse>("/api/dlq/discard", "POST", tok.token, {
        topic,
        positions: chosen.map((e) => ({ partition: e.partition, offset: e.offset })),
        why,
        dryRun: false,
      }),
    onSuccess: (r) => {
      setDone(r);
      onDone();
      void client.invalidateQueries({ queryKey: ["dlq"] });
    },
    onError: (e) => {
      if (needsToken(e)) tok.show();
    },
  });
  const discard = () => {
    const why = window.prompt(discardQuestion(topic, chosen))?.trim();
    if (why) m.mutate(why.slice(0, 500));
  };
  return (
    <Panel
      title="Discard"
      description="Records that need no re-drive (a test message, an event superseded since, a fix made by hand): tick them in the table, then say why. Audited as dlq.discard."
      testId="discard"
    >
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <button
        type="button"
        data-testid="discard-real"
        onClick={discard}
        disabled={!hydrated || m.isPending || chosen.length === 0}
        className={`${btn} bg-red-700 text-white hover:bg-red-800`}
      >
        Discard {chosen.length} selected…
      </button>
      {m.isError ? (
        <p className="mt-2 text-sm text-red-700 dark:text-red-300">
          {m.error instanceof ApiError ? m.error.detail : String(m.error)}
        </p>
      ) : null}
      {done ? (
        <p className="mt-2 text-sm" data-testid="discard-result">
          Discarded <strong>{done.discarded}</strong>
          {done.notOpen ? `; ${done.notOpen} were already re-driven or discarded` : ""}
          {done.notFound ? `; ${done.notFound} no longer in the log` : ""}.
        </p>
      ) : null}
    </Panel>
  );
}
