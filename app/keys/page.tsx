import type { Metadata } from "next";
import { Suspense } from "react";
import { KeyBrowser } from "@/components/keys/key-browser";
import { LoadingState } from "@/components/panel";

export const metadata: Metadata = { title: "Key browser" };

/** Read-only browser of the dedup keys in Redis, by handler prefix. */
export default function KeysPage() {
  return (
    <>
      <h1 className="text-xl font-semibold">Key browser</h1>
      <Suspense fallback={<LoadingState label="Loading key browser…" height={240} />}>
        <KeyBrowser />
      </Suspense>
    </>
  );
}
