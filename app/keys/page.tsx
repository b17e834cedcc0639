import type { Metadata } from "next";
import { KeyBrowser } from "@/components/keys/key-browser";
import { PageShell } from "@/components/page-shell";

export const metadata: Metadata = { title: "Key browser" };

/** Read-only browser of the dedup keys in Redis, by handler prefix. */
export default function KeysPage() {
  return (
    <PageShell title="Key browser" loading="Loading key browser…" height={240}>
      <KeyBrowser />
    </PageShell>
  );
}
