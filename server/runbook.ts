import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseMarkdown, type Block } from "@/lib/markdown";

/** The runbook the app ships: `RUNBOOK.md` at the root of the app (the directory `next start` / `next dev` runs in). */
export const RUNBOOK_FILE = "RUNBOOK.md";

/**
 * RUNBOOK.md read into blocks for the `/runbook` page, whose heading ids are the anchors every
 * alert's `runbook_url` names. Read at each call (a few KB): an edited runbook shows without a rebuild.
 */
export function runbookBlocks(root: string = process.cwd()): Block[] {
  return parseMarkdown(readFileSync(join(root, RUNBOOK_FILE), "utf8"));
}
