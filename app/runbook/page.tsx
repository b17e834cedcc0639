import type { Metadata } from "next";
import { Markdown } from "@/components/runbook/markdown";
import { ScrollToHash } from "@/components/runbook/scroll-to-hash";
import { runbookBlocks } from "@/server/runbook";

export const metadata: Metadata = { title: "Runbook" };

/** RUNBOOK.md as the app ships it, rendered; each alert's runbook link lands on its section (`#<alertname in lower case>`). */
export default function RunbookPage() {
  return (
    <>
      <ScrollToHash />
      <Markdown blocks={runbookBlocks()} />
    </>
  );
}
