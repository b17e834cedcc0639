/**
 * Command-line flags of the scripts (`--name value`), read from `process.argv`: the one place
 * the bench, demo and tool scripts parse their arguments.
 */
import { basename } from "node:path";

/**
 * The script's name in messages: its path under scripts/ with "/" as "-" and no extension, so a
 * benchmark keeps the name its npm script and output use (scripts/bench/scale.ts → bench-scale).
 */
export function scriptName(path: string | undefined): string {
  const under = path?.match(/(?:^|.*[\\/])scripts[\\/](.+)$/)?.[1];
  const name = under ? under.replace(/[\\/]/g, "-") : basename(path ?? "script");
  return name.replace(/\.[cm]?[jt]s$/, "");
}

/** The value after `--name`, or `undefined` when the flag (or its value) is absent. */
export function optArg(name: string, argv: readonly string[] = process.argv): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The value after `--name`, or `fallback` when the flag (or its value) is absent. */
export function arg(name: string, fallback: string, argv: readonly string[] = process.argv): string {
  return optArg(name, argv) ?? fallback;
}

/** Whether the bare flag `--name` is present. */
export function flag(name: string, argv: readonly string[] = process.argv): boolean {
  return argv.includes(`--${name}`);
}

/**
 * `--name` as an integer in [lo, hi] (`fallback` when absent); anything else throws a RangeError
 * that names the script and the flag.
 */
export function intArg(
  name: string,
  fallback: number,
  lo: number,
  hi: number,
  argv: readonly string[] = process.argv,
): number {
  const v = Number(arg(name, String(fallback), argv));
  if (!Number.isInteger(v) || v < lo || v > hi) {
    const script = scriptName(argv[1]);
    throw new RangeError(`${script}: --${name} must be an integer in [${lo}, ${hi}]`);
  }
  return v;
}
