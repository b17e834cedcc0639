"use client";

import type { ListedKey } from "@/lib/api/key-actions";
import { durationWords } from "./key-action-words";

const aliveWords = (k: ListedKey) =>
  k.ownerAlive === null ? (k.owner ? "not known" : "—") : k.ownerAlive ? "alive" : "dead";

/** The keys a dry run matched (the first ones) or a real action changed: state, idle time, TTL and, for a lease, its owner and whether it is alive. */
export function KeyActionList({ keys, matched }: { keys: readonly ListedKey[]; matched: number }) {
  if (keys.length === 0) return null;
  return (
    <div className="mt-2 max-h-64 overflow-auto text-xs">
      <table className="w-full" data-testid="action-keys">
        <caption className="text-left text-slate-500 dark:text-slate-400">
          {keys.length < matched
            ? `The first ${keys.length} of ${matched} keys`
            : `${matched} key${matched === 1 ? "" : "s"}`}
        </caption>
        <thead className="text-left text-slate-500 dark:text-slate-400">
          <tr>
            <th className="pr-2 font-normal">Key</th>
            <th className="pr-2 font-normal">State</th>
            <th className="pr-2 font-normal">Idle</th>
            <th className="pr-2 font-normal">TTL</th>
            <th className="pr-2 font-normal">Lease owner</th>
            <th className="font-normal">Owner</th>
          </tr>
        </thead>
        <tbody className="font-mono">
          {keys.map((k) => (
            <tr key={k.key} data-testid="action-key" data-key={k.key}>
              <td className="pr-2 break-all">{k.key}</td>
              <td className="pr-2">{k.state}</td>
              <td className="pr-2">{k.idleMs === null ? "—" : durationWords(k.idleMs)}</td>
              <td className="pr-2">{k.ttlMs === null ? "—" : durationWords(k.ttlMs)}</td>
              <td className="pr-2">{k.owner ?? "—"}</td>
              <td data-testid="action-key-owner-alive">{aliveWords(k)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
