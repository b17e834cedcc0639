"use client";

import { ApiError } from "@/lib/query-options";
import { FIELD_CLASS } from "../field";
import { needsToken } from "./token";

/** The workshop token field, shown once the server asked for one. */
export function TokenField({ token, setToken }: { token: string | null; setToken: (t: string) => void }) {
  return (
    <div
      role="group"
      aria-label="Workshop token"
      className="rounded border border-amber-300 bg-amber-50 p-2 text-sm dark:border-amber-800 dark:bg-amber-950/40"
    >
      <label className="flex flex-wrap items-center gap-2">
        <span>This server requires the workshop token for runs and switches:</span>
        <input
          data-testid="token-input"
          type="password"
          autoComplete="off"
          value={token ?? ""}
          onChange={(e) => setToken(e.target.value)}
          className={FIELD_CLASS}
        />
      </label>
    </div>
  );
}

/** Why a change failed, under its button: a refused token points at the token field above it, another error says its detail. */
export function MutationError({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="text-xs text-red-700 dark:text-red-300">
      {needsToken(error)
        ? "The server refused the change: enter the workshop token above."
        : error instanceof ApiError
          ? error.detail
          : String(error)}
    </p>
  );
}
