"use client";

import { useEffect } from "react";

/**
 * Brings the section named by the URL's `#anchor` into view once the page has hydrated (and on a
 * later change of the hash): the browser's own jump happens while the streamed page is still
 * arriving and is lost, so a runbook link would open at the top instead of at its alert.
 */
export function ScrollToHash() {
  useEffect(() => {
    const go = () => {
      const id = decodeURIComponent(window.location.hash.slice(1));
      if (id) document.getElementById(id)?.scrollIntoView();
    };
    go();
    window.addEventListener("hashchange", go);
    return () => window.removeEventListener("hashchange", go);
  }, []);
  return null;
}
