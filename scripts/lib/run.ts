/** How the bench scripts end: the exit code of `main`, and where their figures go. */
import { writeFileSync } from "node:fs";

/**
 * Runs a script's `main`: exit 0 when it resolves; when it rejects, print the error (its stack
 * after `[tag] ` when a tag is given) and exit 1.
 */
export function runMain(main: () => Promise<unknown>, tag?: string): void {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      if (tag) console.error(`[${tag}] ${(e as Error).stack ?? e}`);
      else console.error(e);
      process.exit(1);
    },
  );
}

/** Writes the figures to `jsonPath` as indented JSON (skipped when it is empty) and prints them on one line. */
export function emitFigures(out: unknown, jsonPath: string): void {
  if (jsonPath) writeFileSync(jsonPath, `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(out));
}
