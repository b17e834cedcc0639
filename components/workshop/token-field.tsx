"use client";

/** The workshop token field, shown once the server asked for one. */
export function TokenField({ token, setToken }: { token: string | null; setToken: (t: string) => void }) {
  return (
    <div role="group" aria-label="Workshop token" className="rounded border border-amber-300 bg-amber-50 p-2 text-sm dark:border-amber-800 dark:bg-amber-950/40">
      <label className="flex flex-wrap items-center gap-2">
        <span>This server requires the workshop token for runs and switches:</span>
        <input
          data-testid="token-input"
          type="password"
          autoComplete="off"
          value={token ?? ""}
          onChange={(e) => setToken(e.target.value)}
          className="rounded border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-900"
        />
      </label>
    </div>
  );
}
