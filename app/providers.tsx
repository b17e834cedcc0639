"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";

/**
 * One QueryClient per browser tab. Interval polling pauses while the tab is hidden
 * (`refetchIntervalInBackground: false`: react-query's focus manager follows `visibilitychange`)
 * and catches up when it is shown again (`refetchOnWindowFocus`).
 */
export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: { staleTime: 2_000, retry: 1, refetchIntervalInBackground: false, refetchOnWindowFocus: true },
        },
      }),
  );
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
