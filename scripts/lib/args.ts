/**
 * Command-line flags of the scripts (`--name value`), read from `process.argv`: the one place
 * the bench, demo and tool scripts parse their arguments.
 */
import { basename } from "node:path";

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
    const script = basename(argv[1] ?? "script").replace(/\.[cm]?[jt]s$/, "");
    throw new RangeError(`${script}: --${name} must be an integer in [${lo}, ${hi}]`);
  }
  return v;
}
