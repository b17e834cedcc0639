import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order files start in when several run side by side: the long ones first, so the short ones
 * fill the workers at the end instead of one long file starting last and running on alone (the
 * longest-first rule of scheduling). Vitest's own order needs the timings of an earlier run, which
 * a fresh clone has not; without them it starts the largest files first, by bytes, and a short
 * integration file can be larger than a long one.
 *
 * `firstFiles`: paths (relative to the root) that start before every other file of their project,
 * in the order given; then the rest in Vitest's own order; then `lastFiles`, in the order given (a
 * file that should meet the quietest machine, once what ran beside its project has ended).
 */
export function longestFirst(
  firstFiles: readonly string[],
  lastFiles: readonly string[] = [],
): new (ctx: ConstructorParameters<typeof BaseSequencer>[0]) => BaseSequencer {
  return class LongestFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const base = await super.sort(files);
      const rank = (f: TestSpecification): number => {
        const rel = f.moduleId.slice(f.project.config.root.length).replace(/^\/+/, "");
        const i = firstFiles.indexOf(rel);
        if (i >= 0) return i;
        const j = lastFiles.indexOf(rel);
        return j >= 0 ? firstFiles.length + 1 + j : firstFiles.length;
      };
      // A stable sort: Vitest's order (by project first) within each rank.
      return base
        .map((f, i) => ({ f, i, r: rank(f) }))
        .sort((a, b) => (a.f.project.name === b.f.project.name ? a.r - b.r || a.i - b.i : a.i - b.i))
        .map((x) => x.f);
    }
  };
}
