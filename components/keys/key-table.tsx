import { KEY_STATE_LEGEND, type KeyState } from "@/lib/api/common";
import type { KeyEntry } from "@/lib/api/keys";
import Link from "next/link";
import { formatBytes, formatDurationMs } from "@/lib/format";
import { messageHref, uuidSearchHref } from "@/lib/record-queries";

type ListedKeyEntry = KeyEntry & { prefix?: string };

const STATE_TONE: Record<KeyState, string> = {
  done: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/40 dark:text-emerald-100",
  processing: "bg-amber-100 text-amber-900 dark:bg-amber-900/40 dark:text-amber-100",
  marked: "bg-blue-100 text-blue-900 dark:bg-blue-900/40 dark:text-blue-100",
  other: "bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200",
};

/** Keys with state, TTL left, size and a link to the record of the first delivery ("open the message"). `showPrefix` adds the handler column (lookup results). */
export function KeyTable({
  keys,
  caption,
  showPrefix = false,
}: {
  keys: readonly ListedKeyEntry[];
  caption: string;
  showPrefix?: boolean;
}) {
  const shown = [...new Set(keys.map((k) => k.state))];
  return (
    <>
      <table className="w-full text-sm">
        <caption className="sr-only">{caption}</caption>
        <KeyTableHead showPrefix={showPrefix} />
        <tbody>
          {keys.map((k) => (
            <KeyRow key={k.key} k={k} showPrefix={showPrefix} />
          ))}
        </tbody>
      </table>
      <KeyStateLegend states={shown} />
    </>
  );
}

/** The column heads (the handler prefix first when `showPrefix`). */
function KeyTableHead({ showPrefix }: { showPrefix: boolean }) {
  return (
    <thead className="text-left text-xs text-slate-500 dark:text-slate-400">
      <tr>
        {showPrefix ? (
          <th scope="col" className="py-1 font-normal">
            Handler prefix
          </th>
        ) : null}
        <th scope="col" className="py-1 font-normal">
          Message UUID
        </th>
        <th scope="col" className="font-normal">
          State
        </th>
        <th scope="col" className="text-right font-normal">
          TTL left
        </th>
        <th scope="col" className="text-right font-normal">
          Size
        </th>
        <th scope="col" className="text-right font-normal">
          Record
        </th>
      </tr>
    </thead>
  );
}

/** One key: its UUID, state, TTL left (red without a TTL), size and record link. */
function KeyRow({ k, showPrefix }: { k: ListedKeyEntry; showPrefix: boolean }) {
  return (
    <tr data-testid="key-row" className="border-t border-slate-100 dark:border-slate-800">
      {showPrefix ? <td className="py-1 font-mono text-xs">{k.prefix}</td> : null}
      <td className="py-1 font-mono text-xs" title={k.key}>
        {k.uuid}
      </td>
      <td>
        <span className={`rounded px-1.5 py-0.5 text-xs ${STATE_TONE[k.state]}`} title={KEY_STATE_LEGEND[k.state]}>
          {k.state}
        </span>
        {k.fingerprint ? (
          <span
            data-testid="key-fingerprint"
            className="ml-1 font-mono text-xs text-slate-500"
            title="payload fingerprint"
          >
            #{k.fingerprint}
          </span>
        ) : null}
      </td>
      <td className={`text-right tabular-nums ${k.ttlMs === -1 ? "font-semibold text-red-700 dark:text-red-300" : ""}`}>
        {k.ttlMs === null ? "expired" : formatDurationMs(k.ttlMs)}
      </td>
      <td
        className="text-right tabular-nums"
        title={
          k.bytesEstimated ? "estimated: heap bytes of key, value and entry in the in-memory store" : "MEMORY USAGE"
        }
      >
        {k.bytesEstimated ? `≈ ${formatBytes(k.bytes)} (est.)` : formatBytes(k.bytes)}
      </td>
      <RecordCell k={k} />
    </tr>
  );
}

/** The link to the record of the first delivery, or to a search of its topic for the UUID when the key holds no position. */
function RecordCell({ k }: { k: ListedKeyEntry }) {
  return (
    <td className="text-right">
      {k.record ? (
        <Link
          data-testid="open-message"
          href={messageHref(k.record)}
          className="text-blue-700 underline dark:text-blue-300"
          title={`${k.record.topic} / ${k.record.partition} / ${k.record.offset}`}
        >
          open the message
        </Link>
      ) : (
        <Link
          href={uuidSearchHref(k.topic ?? "", k.uuid)}
          className="text-slate-600 underline dark:text-slate-300"
          title={`no position in the key's value: search ${k.topic ? `${k.topic} (its handler's topic)` : "a topic"} for the UUID`}
        >
          find by UUID
        </Link>
      )}
    </td>
  );
}

/** What each state shown in the table means (none for an empty table). */
function KeyStateLegend({ states }: { states: readonly KeyState[] }) {
  if (!states.length) return null;
  return (
    <dl
      className="mt-2 grid grid-cols-[auto_1fr] gap-x-2 text-xs text-slate-600 dark:text-slate-400"
      data-testid="key-state-legend"
    >
      {states.map((s) => (
        <div key={s} className="contents">
          <dt>
            <span className={`rounded px-1.5 py-0.5 ${STATE_TONE[s]}`}>{s}</span>
          </dt>
          <dd>{KEY_STATE_LEGEND[s]}</dd>
        </div>
      ))}
    </dl>
  );
}
