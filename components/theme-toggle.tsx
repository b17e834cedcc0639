"use client";

import { useEffect, useState } from "react";

/** Key of the chosen theme in localStorage (read before paint by the script in app/layout.tsx). */
export const THEME_KEY = "dedup-health-theme";

/**
 * Script run before the first paint: applies the stored theme, or the system's. Inline on purpose
 * (no flash of the wrong theme); the CSP allows inline scripts for Next.js' own bootstrap.
 */
export const THEME_SCRIPT = `try{var t=localStorage.getItem(${JSON.stringify(THEME_KEY)});if(t==="dark"||(!t&&matchMedia("(prefers-color-scheme: dark)").matches))document.documentElement.classList.add("dark")}catch(e){}`;

/**
 * Light/dark switch: toggles the `dark` class on <html> and remembers the choice. The label names
 * the theme a click switches TO ("Dark theme" in light mode, "Light theme" in dark mode); before
 * hydration it cannot know the theme the pre-paint script chose, so it says "Theme".
 */
export function ThemeToggle() {
  const [dark, setDark] = useState<boolean | null>(null);
  useEffect(() => setDark(document.documentElement.classList.contains("dark")), []);
  const toggle = () => {
    const next = !document.documentElement.classList.contains("dark");
    document.documentElement.classList.toggle("dark", next);
    try {
      localStorage.setItem(THEME_KEY, next ? "dark" : "light");
    } catch {
      /* private mode: the choice lasts for this page only */
    }
    setDark(next);
  };
  return (
    <button
      type="button"
      data-testid="theme"
      onClick={toggle}
      aria-label={dark === null ? "Switch theme" : dark ? "Switch to the light theme" : "Switch to the dark theme"}
      className="rounded border border-slate-300 px-2 py-1 text-sm hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-700 dark:hover:bg-slate-800"
    >
      {dark === null ? "Theme" : dark ? "Light theme" : "Dark theme"}
    </button>
  );
}
