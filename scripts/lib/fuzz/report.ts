/** What a fuzz run found, the server's RSS as it went, and the summary printed at the end. */
import { readdirSync, readFileSync } from "node:fs";

/** RSS in kB of `pid` and its children (from /proc). */
export function rssKb(pid: number): number | null {
  try {
    const own = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    let kids = 0;
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      let children = "";
      try {
        children = readFileSync(`/proc/${pid}/task/${t}/children`, "utf8");
      } catch {
        continue;
      }
      for (const c of children.split(/\s+/).filter(Boolean)) kids += rssKb(Number(c)) ?? 0;
    }
    return own + kids;
  } catch {
    return null;
  }
}

/** What a run found. */
export interface FuzzReport {
  seed: number;
  requests: number;
  seconds: number;
  byStatus: Record<string, number>;
  byRoute: Record<string, number>;
  /** Each 5xx with the request's headers and the status of the same request sent again at once (a one-off or not). */
  serverErrors: Array<{
    method: string;
    url: string;
    headers: Record<string, string>;
    status: number;
    body: string;
    malformedPath: boolean;
    again: number | string;
  }>;
  /** 5xx answers to a path with an undecodable %-sequence (Next.js decodes dynamic segments itself). */
  serverErrorsMalformedPath: number;
  /** Every other 5xx answer. */
  serverErrorsOther: number;
  leaks: Array<{ method: string; url: string; found: string }>;
  noAnswer: Array<{ method: string; url: string; error: string }>;
  rssKb: { start: number | null; max: number | null; end: number | null };
  /** RSS (kB) after every tenth of the requests: growth that levels off is a cache, growth that does not is a leak. */
  rssTimelineKb: Array<number | null>;
  serverAlive: boolean;
  ok: boolean;
}

/** A report with nothing counted yet. */
export function emptyReport(seed: number): FuzzReport {
  return {
    seed,
    requests: 0,
    seconds: 0,
    byStatus: {},
    byRoute: {},
    serverErrors: [],
    serverErrorsMalformedPath: 0,
    serverErrorsOther: 0,
    leaks: [],
    noAnswer: [],
    rssKb: { start: null, max: null, end: null },
    rssTimelineKb: [],
    serverAlive: true,
    ok: false,
  };
}

/** Prints the run's one-line summary, then the first 5xx answers, leaks and unanswered requests. */
export function printReport(rep: FuzzReport, routeCount: number): void {
  const fivexx = Object.entries(rep.byStatus)
    .filter(([s]) => /^5/.test(s))
    .reduce((a, [, n]) => a + n, 0);
  console.log(
    `[fuzz-api] seed ${rep.seed}: ${rep.requests} requests over ${routeCount} routes in ${rep.seconds.toFixed(1)} s (${(rep.requests / rep.seconds).toFixed(0)}/s); ` +
      `status ${Object.entries(rep.byStatus)
        .map(([s, n]) => `${s}:${n}`)
        .join(
          " ",
        )}; 5xx ${fivexx} (${rep.serverErrorsMalformedPath} on an undecodable path); leaks ${rep.leaks.length}; no answer ${rep.noAnswer.length}; ` +
      `RSS ${rep.rssKb.start !== null ? `${(rep.rssKb.start / 1024).toFixed(0)} → max ${((rep.rssKb.max ?? 0) / 1024).toFixed(0)} → end ${((rep.rssKb.end ?? 0) / 1024).toFixed(0)} MB` : "not sampled"}; server ${rep.serverAlive ? "up" : "DOWN"}`,
  );
  for (const e of [
    ...rep.serverErrors.filter((x) => !x.malformedPath).slice(0, 5),
    ...rep.serverErrors.filter((x) => x.malformedPath).slice(0, 2),
  ])
    console.log(
      `[fuzz-api] ${e.status} ${e.method} ${e.url} headers ${JSON.stringify(e.headers)} → ${e.body} (sent again: ${e.again})`,
    );
  for (const e of rep.leaks.slice(0, 5)) console.log(`[fuzz-api] LEAK ${e.method} ${e.url} contains ${e.found}`);
  for (const e of rep.noAnswer.slice(0, 5)) console.log(`[fuzz-api] NO ANSWER ${e.method} ${e.url}: ${e.error}`);
}
