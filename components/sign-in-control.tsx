"use client";

import { useQuery } from "@tanstack/react-query";
import { usePathname } from "next/navigation";
import { useState } from "react";
import type { AuthSession, LogoutResponse } from "@/lib/api/auth";
import { fetchJson } from "@/lib/query-options";

/** The sign-in link for a page at `path`: the login route, back to `path` afterwards. (Here, not in lib/api/auth.ts: the browser bundle takes only types from lib/api, no zod.) */
const signInHref = (path: string) => `/api/auth/login?returnTo=${encodeURIComponent(path)}`;

const BUTTON =
  "rounded px-2 py-1 text-sm font-medium ring-1 ring-slate-300 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:ring-slate-700 dark:hover:bg-slate-800";

/**
 * "Sign in" / "Sign out" in the header when sign-in is on (AUTH_MODE=oidc, `GET /api/auth/session`);
 * nothing in the other modes. Sign-out is a JSON POST (proxy.ts refuses a cross-site or form one),
 * then the browser goes where the answer says: the provider's end-session page, or home.
 */
export function SignInControl() {
  const path = usePathname();
  const q = useQuery({
    queryKey: ["auth-session"],
    queryFn: () => fetchJson<AuthSession>("/api/auth/session"),
    staleTime: 30_000,
  });
  const [error, setError] = useState<string | null>(null);
  if (!q.data?.signIn) return null;
  if (!q.data.user) {
    return (
      <a href={signInHref(path || "/")} data-testid="sign-in" className={BUTTON}>
        Sign in
      </a>
    );
  }
  const signOut = async () => {
    try {
      const r = await fetchJson<LogoutResponse>("/api/auth/logout", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      window.location.assign(r.redirect);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <span className="flex items-center gap-2">
      <button
        type="button"
        data-testid="sign-out"
        className={BUTTON}
        title={`Signed in as ${q.data.user.name} until ${new Date(q.data.user.expiresAt).toLocaleString()}`}
        onClick={() => void signOut()}
      >
        Sign out
      </button>
      {error ? (
        <span role="alert" className="text-xs text-red-700 dark:text-red-300">
          Sign-out failed: {error}
        </span>
      ) : null}
    </span>
  );
}
