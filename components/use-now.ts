"use client";

import { useEffect, useState } from "react";

/**
 * The time, from the first effect on and then every `everyMs`; `null` during the server's paint and
 * hydration. A figure or a note computed from it (a count behind its traffic, a window that still
 * reaches before the app's start) is drawn after hydration only, so the server's HTML and the
 * browser's first render cannot disagree on it (React error 418).
 */
export function useNow(everyMs: number): number | null {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
