import type { Finding } from "@/lib/api/common";
import type { HandlerKeys } from "@/lib/api/handlers";
import type { LintResponse } from "@/lib/api/lint";
import { TTL_POLICY, type TtlClass } from "@/lib/thresholds";
import { lintHandler } from "@/server/dedup";
import type { ObserveContext } from "./context";
import { declaredHandlers, declaredPrefix } from "./handler-registry";
import { got, inspectedHandlers, unavailable } from "./upstream";

const fmtMs = (ms: number) => (ms >= 3_600_000 ? `${+(ms / 3_600_000).toFixed(1)} h` : `${+(ms / 60_000).toFixed(1)} min`);

/**
 * The TTL policy of spec §3 checked against what Redis holds for one handler. Observed TTLs are
 * remaining TTLs, so the largest one is a lower bound of the configured window: a largest TTL
 * below a limit means the window is below it only while keys are being written — the finding says so.
 */
export function lintObserved(h: HandlerKeys, ttlClass: TtlClass | null): Finding[] {
  const f: Finding[] = [];
  if (h.noTtlCount > 0) {
    f.push({ severity: "error", rule: "ttl-missing", specSection: "§3", message: `${h.noTtlExact ? "" : "About "}${h.noTtlCount} of ${h.keyCount} keys have no TTL: they never expire and Redis memory only grows. Set keys with PX (SET key v NX PX ttl).` });
  }
  const max = h.ttlObserved?.maxMs;
  if (max !== undefined) {
    if (max < TTL_POLICY.minimumMs) {
      f.push({ severity: "error", rule: "ttl-below-minimum", specSection: "§3", message: `Largest TTL left is ${fmtMs(max)}, below 10 min: a retry plus a rebalance outlives the key. Use 24 h (critical: 7 d).` });
    } else if (max < TTL_POLICY.warnBelowMs && ttlClass !== "analytics") {
      f.push({ severity: "warning", rule: "ttl-below-hour", specSection: "§3", message: `Largest TTL left is ${fmtMs(max)}, below 1 h; only high-volume analytics handlers may go that low. Use 24 h (if keys are still being written).` });
    }
    if (ttlClass === "analytics" && max > TTL_POLICY.analyticsMaxMs * 1.01) {
      f.push({ severity: "warning", rule: "analytics-ttl-above-hour", specSection: "§3", message: `Analytics handler keeps keys ${fmtMs(max)}: the policy is 1 h or less where Redis memory matters.` });
    }
  }
  return f;
}

/**
 * Each handler's attempt p99 over the last hour (seconds), by `service\u0000handler`; empty when the
 * metrics are unavailable (the rules that need it then stay silent: the lint never guesses).
 */
async function handlerP99s(ctx: ObserveContext): Promise<Map<string, number>> {
  // An hour's quantile moves slowly: one upstream query per 15 s, whatever the number of viewers.
  const r = await ctx.answers.get("lint:handler_p99_1h", () => got(ctx.metrics.instant("handler_p99_1h")), 15_000);
  const out = new Map<string, number>();
  if (!r.ok) return out;
  for (const s of r.value) if (s.value !== null && Number.isFinite(s.value)) out.set(`${s.labels.service}\u0000${s.labels.handler}`, s.value);
  return out;
}

/**
 * Builds `GET /api/lint`: the library's lint of the declared handlers (with their measured handler
 * p99 of the last hour, for `handler-p99-near-lease`), and the TTL policy per handler found in Redis.
 */
export async function getLint(ctx: ObserveContext): Promise<LintResponse> {
  const declared = declaredHandlers();
  const p99s = await handlerP99s(ctx);
  const byPrefix = new Map(declared.map((d) => [declaredPrefix(d), d]));
  const keys = inspectedHandlers(ctx);
  return {
    generatedAt: new Date().toISOString(),
    declared: {
      status: "ok",
      handlers: declared.map((d) => {
        const handlerP99Seconds = p99s.get(`${d.service}\u0000${d.setup.handler}`) ?? null;
        return {
          service: d.service,
          handler: d.setup.handler,
          ttlClass: d.setup.ttlClass,
          ttlMs: d.setup.ttlMs,
          leaseMs: d.setup.leaseMs,
          handlerP99Seconds,
          findings: lintHandler(d.setup, { handlerP99Seconds }).map((x) => ({ severity: x.severity, rule: x.rule, message: x.message, specSection: x.specSection })),
        };
      }),
    },
    observed: keys.ok
      ? {
          status: "ok",
          handlers: keys.value.map((h) => ({
            service: h.service,
            handler: h.handler,
            prefix: h.prefix,
            ttlObserved: h.ttlObserved,
            noTtlCount: h.noTtlCount,
            findings: lintObserved(h, byPrefix.get(h.prefix)?.setup.ttlClass ?? null),
          })),
        }
      : unavailable(keys.detail),
  };
}
