"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";

/** How long after hydration a deferred panel mounts even if it was never scrolled to. */
export const DEFER_MS = 1_200;

/**
 * Mounts `children` (a chart panel below the fold) once it comes near the viewport, or
 * {@link DEFER_MS} after hydration, whichever is first: the charts at the top of the page draw
 * without the ones below competing for the main thread (issue 15, "charts lazy below the fold").
 * Until then a placeholder of `height` px keeps the layout from jumping. The server and the first
 * client render both draw the placeholder, so hydration matches.
 */
export function DeferMount({ children, height }: { children: ReactNode; height: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const [on, setOn] = useState(false);
  useEffect(() => {
    if (on) return;
    const t = setTimeout(() => setOn(true), DEFER_MS);
    const el = ref.current;
    const io = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && setOn(true), { rootMargin: "100px" });
    if (el && io) io.observe(el);
    return () => {
      clearTimeout(t);
      io?.disconnect();
    };
  }, [on]);
  if (on) return <>{children}</>;
  return <div ref={ref} style={{ minHeight: height }} aria-busy="true" data-deferred="" />;
}
