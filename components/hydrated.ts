"use client";

import { useSyncExternalStore } from "react";

const noSubscription = () => () => undefined;

/**
 * False in the server's paint and while React hydrates it, true in every client render after
 * (and at once in a component first mounted on the client). What the server cannot know (a live
 * query's state, a control that works only with React) waits for it: other text in the first
 * client render than in the server's HTML is a hydration mismatch (React error 418).
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}
