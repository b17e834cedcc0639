import { HydrationBoundary, type DehydratedState } from "@tanstack/react-query";
import { Suspense, type ReactNode } from "react";
import { LoadingState } from "./panel";

/**
 * The frame of a dashboard page: its heading, then its view behind a loading placeholder of the
 * view's height (the view reads the URL's search params, so it renders inside a Suspense boundary).
 * With `state` the page's prefetched queries hydrate the view, so its numbers arrive in the HTML.
 * Server-renderable.
 */
export function PageShell({
  title,
  large = false,
  loading,
  height,
  state,
  children,
}: {
  /** The page's heading; none where the view draws its own. */
  title?: string;
  /** Projector type (the workshop's presenter page). */
  large?: boolean;
  /** What the placeholder says while the view loads. */
  loading: string;
  /** The placeholder's height in px, about the view's first panel. */
  height: number;
  state?: DehydratedState;
  children: ReactNode;
}) {
  const view = <Suspense fallback={<LoadingState label={loading} height={height} />}>{children}</Suspense>;
  return (
    <>
      {title ? <h1 className={large ? "text-3xl font-bold" : "text-xl font-semibold"}>{title}</h1> : null}
      {state ? <HydrationBoundary state={state}>{view}</HydrationBoundary> : view}
    </>
  );
}
