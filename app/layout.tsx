import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { Suspense, type ReactNode } from "react";
import { HealthStrip } from "@/components/health-strip";
import { NavLinks, NavLinksFallback } from "@/components/nav-links";
import { SignInControl } from "@/components/sign-in-control";
import { THEME_SCRIPT } from "@/components/theme-toggle";
import { Toolbar } from "@/components/toolbar";
import { WhoAmI } from "@/components/whoami";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "dedup-health", template: "%s · dedup-health" },
  description: "Deduplication health of idempotent Kafka consumers",
};

/** Shell of every page: header with navigation, view controls and the status strip. */
export default async function RootLayout({ children }: { children: ReactNode }) {
  // The per-request CSP nonce of proxy.ts (reading it makes every page dynamic, as nonces require).
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-1 focus:text-slate-900"
        >
          Skip to content
        </a>
        <Providers>
          <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
            <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
              <Link
                href="/"
                className="text-lg font-semibold tracking-tight focus-visible:outline-2 focus-visible:outline-blue-600"
              >
                dedup-health
              </Link>
              <Suspense fallback={<NavLinksFallback />}>
                <NavLinks />
              </Suspense>
              <div className="ml-auto">
                <Suspense fallback={null}>
                  <Toolbar />
                </Suspense>
              </div>
              <WhoAmI />
              <SignInControl />
            </div>
            <div className="mx-auto max-w-7xl px-4 pb-2">
              <HealthStrip />
            </div>
          </header>
          <main id="main" className="mx-auto max-w-7xl space-y-4 p-4">
            {children}
          </main>
        </Providers>
      </body>
    </html>
  );
}
