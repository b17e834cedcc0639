"use client";

import { ErrorState } from "@/components/panel";

/** Route-level error boundary: a page that threw shows what failed and a retry, inside the shell. */
export default function RouteError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <ErrorState
      title="This page failed to render"
      detail={`${error.message}${error.digest ? ` (digest ${error.digest})` : ""}`}
      height={200}
      onRetry={reset}
    />
  );
}
