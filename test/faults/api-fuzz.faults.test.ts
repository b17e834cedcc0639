/**
 * 10,000 random and adversarial requests across every route (scripts/fuzz-api.ts)
 * against the built app on 127.0.0.1 in real mode, pointed at the suite's redis-server with keys
 * seeded inside and outside the configured prefixes (`*:dedup:*`): no 5xx, no answer naming a key
 * outside the prefixes or the Redis password, the server stays up with bounded memory, the seeded
 * keys are untouched, and every PromQL the app sent is one of its named queries.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROMQL } from "@/lib/named-queries";
import type { FuzzReport } from "@/scripts/fuzz-api";
import { OUTSIDE_MARKER, startFaultApp, type FaultApp } from "./lib/app";
import { FAULT_BROKERS } from "./lib/kafka";
import { ROOT } from "./lib/procs";
import { report } from "./lib/stream";

const REQUESTS = Number(process.env.FAULTS_FUZZ_REQUESTS ?? 10_000);

describe(`case 6: API fuzz, ${REQUESTS} requests`, () => {
  let fa: FaultApp;
  let before: Map<string, string | null>;

  beforeAll(async () => {
    // Real mode in full: the suite's own broker too (DEMO=off: no consumer load).
    fa = await startFaultApp({ KAFKA_BROKERS: FAULT_BROKERS.join(",") });
    const c = fa.redis.client();
    try {
      const keys = [...fa.keys.inside, ...fa.keys.outside];
      const values = await c.mget(...keys);
      before = new Map(keys.map((k, i) => [k, values[i] ?? null]));
    } finally {
      c.disconnect();
    }
  });

  afterAll(async () => fa?.close());

  let fuzz: FuzzReport | undefined;

  it("no 5xx, no key outside the prefixes, no password in any answer; the server stays up, memory bounded, Redis untouched, PromQL only the named queries", async () => {
    const t0 = Date.now();
    const out = join(ROOT, "test-results", "faults", "fuzz.json");
    const forbidden = [OUTSIDE_MARKER, fa.password, ...fa.keys.outside];
    const run = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "scripts", "fuzz-api.ts"),
        "--url",
        fa.app.url,
        "--requests",
        String(REQUESTS),
        "--concurrency",
        "8",
        "--pid",
        String(fa.app.pid),
        "--max-rss-growth-mb",
        "384",
        "--forbidden",
        forbidden.join(","),
        "--json",
        out,
      ],
      { cwd: ROOT, timeout: 480_000, maxBuffer: 16 * 1024 * 1024 },
    ).catch((e: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: e.stdout ?? "",
      stderr: `${e.stderr ?? ""} (exit ${e.code})`,
    }));
    console.log(
      run.stdout
        .split("\n")
        .filter((l) => l.includes("seed") || /^\[fuzz-api\] (\d{3}|LEAK|NO)/.test(l))
        .join("\n"),
    );
    const r = JSON.parse(readFileSync(out, "utf8")) as FuzzReport;
    fuzz = r;
    const fivexx = Object.entries(r.byStatus)
      .filter(([s]) => s.startsWith("5"))
      .reduce((a, [, n]) => a + n, 0);
    const growthMb = ((r.rssKb.max ?? 0) - (r.rssKb.start ?? 0)) / 1024;

    const c = fa.redis.client();
    let changed: string[] = [];
    try {
      const keys = [...before.keys()];
      const now = await c.mget(...keys);
      changed = keys.filter((k, i) => (now[i] ?? null) !== before.get(k));
    } finally {
      c.disconnect();
    }
    const named = new Set(Object.values(PROMQL));
    const foreignQueries = fa.prometheus.requests.filter(
      (q) => q.params.query !== undefined && !named.has(q.params.query),
    );
    const answered = Object.entries(r.byStatus)
      .filter(([s]) => /^\d+$/.test(s))
      .reduce((a, [, n]) => a + n, 0);
    report({
      case: "6 api fuzz",
      published: r.requests,
      processed: answered,
      lost: fivexx + r.noAnswer.length,
      duplicateSideEffects: 0,
      dlq: 0,
      seconds: (Date.now() - t0) / 1000,
      note: `seed ${r.seed}; status ${Object.entries(r.byStatus)
        .map(([s, n]) => `${s}:${n}`)
        .join(
          " ",
        )}; leaks ${r.leaks.length}; RSS ${((r.rssKb.start ?? 0) / 1024).toFixed(0)} → max ${((r.rssKb.max ?? 0) / 1024).toFixed(0)} MB (per tenth: ${r.rssTimelineKb.map((k) => ((k ?? 0) / 1024).toFixed(0)).join(" ")}); ${fa.prometheus.requests.length} Prometheus requests, ${foreignQueries.length} not a named query; seeded keys changed ${changed.length}`,
    });

    expect(r.requests).toBe(REQUESTS);
    expect(Object.keys(r.byRoute).length, "routes covered").toBeGreaterThanOrEqual(15);
    // 5xx on an undecodable path are asserted by the next test (one finding, one failing test).
    const other = r.serverErrors.filter((e) => !e.malformedPath);
    // A 5xx says why only in the server's own output: keep it beside the report and in the failure.
    const appLog = fa.app.logs();
    if (fivexx > 0) writeFileSync(join(ROOT, "test-results", "faults", "fuzz-app.log"), appLog);
    expect(other, `${JSON.stringify(other.slice(0, 3))}\nthe app's last output:\n${appLog.slice(-3000)}`).toEqual([]);
    expect(r.serverErrorsOther).toBe(0);
    expect(fivexx).toBe(r.serverErrorsMalformedPath);
    expect(r.leaks, JSON.stringify(r.leaks.slice(0, 3))).toEqual([]);
    expect(r.noAnswer, JSON.stringify(r.noAnswer.slice(0, 3))).toEqual([]);
    expect(r.serverAlive).toBe(true);
    expect(r.rssKb.start).not.toBeNull();
    // Bounded, not flat: V8 grows its heap before collecting. A 30,000-request run peaked at
    // +230 MB near 14,000 requests and settled at +115 MB from 17,000 on. Fresh-clone CI runs, with
    // browser tests beside the case, grew 314-387 MB with no leak; a leak of 12 kB per request adds
    // 120 MB over these 10,000 and passes 448 MB.
    expect(growthMb).toBeLessThan(448);
    expect(changed).toEqual([]);
    expect(foreignQueries.map((q) => q.params.query)).toEqual([]);
  });

  it("a path with an undecodable %-sequence in a dynamic segment is a 400, not a 500", async () => {
    const statuses: Record<string, number> = {};
    for (const [m, p] of [
      ["GET", "/handlers/%/on-review-created"],
      ["GET", "/handlers/notification/%ZZ"],
      ["GET", "/api/workshop/runs/%"],
      ["POST", "/api/workshop/scenarios/%ED%A0%80/runs"],
    ] as const) {
      statuses[`${m} ${p}`] = (await fetch(`${fa.app.url}${p}`, { method: m })).status;
    }
    const fuzz5xx = fuzz?.serverErrorsMalformedPath ?? 0;
    expect(statuses, `the fuzz met ${fuzz5xx} such 5xx`).toEqual(
      Object.fromEntries(Object.keys(statuses).map((k) => [k, 400])),
    );
  });
});
