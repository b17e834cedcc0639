"use client";

import { useQuery } from "@tanstack/react-query";
import { whoamiText, writeBlockedReason, type Whoami } from "@/lib/api/whoami";
import { fetchJson } from "@/lib/query-options";

/** `GET /api/whoami`, shared by the header and every write button (one request per half minute). */
export function useWhoami(): Whoami | undefined {
  return useQuery({ queryKey: ["whoami"], queryFn: () => fetchJson<Whoami>("/api/whoami"), staleTime: 30_000 }).data;
}

/** Why a write button on `service` is disabled for the caller (its `title`), or null: see {@link writeBlockedReason}. */
export function useWriteBlocked(service?: string): string | null {
  return writeBlockedReason(useWhoami(), service);
}

/** The header's "signed in as alice (operator: billing)" / "anonymous — read only". */
export function WhoAmI() {
  const w = useWhoami();
  if (!w) return null;
  const detail = [w.email, w.groups.length ? `groups: ${w.groups.join(", ")}` : null, `mode: ${w.mode}`]
    .filter(Boolean)
    .join(" · ");
  return (
    <span data-testid="whoami" title={detail} className="text-xs text-slate-600 dark:text-slate-400">
      {whoamiText(w)}
    </span>
  );
}
