"use client";

import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { hrefWithView } from "@/lib/url-state";

const LINKS = [
  { href: "/", label: "Overview" },
  { href: "/alerts", label: "Alerts" },
  { href: "/keys", label: "Key browser" },
  { href: "/records", label: "Messages" },
  { href: "/dlq", label: "DLQ" },
  { href: "/audit", label: "Audit" },
  { href: "/workshop", label: "Workshop" },
  { href: "/runbook", label: "Runbook" },
] as const;

/** The main navigation; links carry the current range and refresh so the view follows. */
export function NavLinks() {
  const path = usePathname();
  const sp = useSearchParams();
  return (
    <nav aria-label="Main">
      <ul className="flex flex-wrap gap-1 text-sm">
        {LINKS.map((l) => {
          const active = l.href === "/" ? path === "/" || path.startsWith("/handlers") : path.startsWith(l.href);
          return (
            <li key={l.href}>
              <Link
                href={hrefWithView(l.href, sp)}
                prefetch={false}
                aria-current={active ? "page" : undefined}
                className={`rounded px-2 py-1 focus-visible:outline-2 focus-visible:outline-blue-600 ${active ? "bg-slate-900 text-white dark:bg-slate-100 dark:text-slate-900" : "hover:bg-slate-100 dark:hover:bg-slate-800"}`}
              >
                {l.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** Static fallback while the search parameters are read (same links without the view state). */
export function NavLinksFallback() {
  return (
    <nav aria-label="Main">
      <ul className="flex flex-wrap gap-1 text-sm">
        {LINKS.map((l) => (
          <li key={l.href}>
            <a href={l.href} className="rounded px-2 py-1">
              {l.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
