"use client";

import { useCallback, useEffect, useState } from "react";
import { ApiError } from "@/lib/query-options";

const KEY = "dedup-health-workshop-token";

/** True when the server answered that a token is required (401) or that the one sent is wrong (403). */
export function needsToken(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 401 || e.status === 403);
}

/**
 * The presenter's workshop token, kept in sessionStorage for this tab only; `shown` turns true once
 * the server says a token is required, and the token field appears.
 */
export function useWorkshopToken(): {
  token: string | null;
  setToken: (t: string) => void;
  shown: boolean;
  show: () => void;
} {
  const [token, setTok] = useState<string | null>(null);
  const [shown, setShown] = useState(false);
  useEffect(() => {
    try {
      const t = sessionStorage.getItem(KEY);
      if (t) {
        setTok(t);
        setShown(true);
      }
    } catch {
      /* storage disabled */
    }
  }, []);
  const setToken = useCallback((t: string) => {
    setTok(t || null);
    try {
      if (t) sessionStorage.setItem(KEY, t);
      else sessionStorage.removeItem(KEY);
    } catch {
      /* storage disabled: keep it in memory */
    }
  }, []);
  return { token, setToken, shown, show: useCallback(() => setShown(true), []) };
}
