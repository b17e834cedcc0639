"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";
import { InteractiveCharts } from "../charts/lazy";

/** How long after hydration a deferred panel's charts turn interactive even if it was never scrolled to. */
export const DEFER_MS = 1_200;

/**
 * Renders `children` (chart panels below the fold) at once — their charts as the server's drawing
 * of the data (components/charts/static-chart.tsx), so the page's HTML has every line — and lets
 * them switch to the interactive chart (recharts) once they come near the viewport, or
 * {@link DEFER_MS} after hydration, whichever is first: the charts at the top of the page turn
 * interactive without the ones below competing for the main thread. The server and the first client render both draw the static charts, so hydration
 * matches.
 */
export function DeferMount({ children, height }: { children: ReactNode; height: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const [on, setOn] = useState(false);
  useEffect(() => {
    if (on) return;
    const t = setTimeout(() => setOn(true), DEFER_MS);
    const el = ref.current;
    const io =
      typeof IntersectionObserver === "undefined"
        ? null
        : new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && setOn(true), { rootMargin: "100px" });
    if (el && io) io.observe(el);
    return () => {
      clearTimeout(t);
      io?.disconnect();
    };
  }, [on]);
  return (
    <div ref={ref} style={{ minHeight: height }} {...(on ? {} : { "data-deferred": "" })}>
      <InteractiveCharts.Provider value={on}>{children}</InteractiveCharts.Provider>
    </div>
  );
}
