import type { Finding } from "@/lib/api/common";
import type { HandlerKeys } from "@/lib/api/handlers";
import type { LintResponse } from "@/lib/api/lint";
import { TTL_POLICY, type TtlClass } from "@/names/keys";
import { lintHandler } from "@/server/dedup";
import { INFO_MARKING, TRANSACTIONS_DECLARATION } from "@/names/contract";
import type { ObserveContext } from "../core/ports";
import { isTransactional, modeOfInfo, refreshFleetInfo } from "../shared/fleet-info";
import { declaredHandlers, declaredPrefix, type DeclaredHandler, type InfoDeclaration } from "../core/handler-registry";
import { got, inspectedHandlers, unavailable } from "../shared/upstream";

const fmtMs = (ms: number) =>
  ms >= 3_600_000 ? `${+(ms / 3_600_000).toFixed(1)} h` : `${+(ms / 60_000).toFixed(1)} min`;

/**
 * The TTL policy of spec §3 checked against what Redis holds for one handler. Observed TTLs are
 * remaining TTLs, so the largest one is a lower bound of the configured window: a largest TTL
 * below a limit means the window is below it only while keys are being written — the finding says so.
 */
export function lintObserved(h: HandlerKeys, ttlClass: TtlClass | null): Finding[] {
  const f: Finding[] = [];
  if (h.noTtlCount > 0) {
    f.push({
      severity: "error",
      rule: "ttl-missing",
      specSection: "§3",
      message: `${h.noTtlExact ? "" : "About "}${h.noTtlCount} of ${h.keyCount} keys have no TTL: they never expire and Redis memory only grows. Set keys with PX (SET key v NX PX ttl).`,
    });
  }
  const max = h.ttlObserved?.maxMs;
  if (max !== undefined) {
    if (max < TTL_POLICY.minimumMs) {
      f.push({
        severity: "error",
        rule: "ttl-below-minimum",
        specSection: "§3",
        message: `Largest TTL left is ${fmtMs(max)}, below 10 min: a retry plus a rebalance outlives the key. Use 24 h (critical: 7 d).`,
      });
    } else if (max < TTL_POLICY.warnBelowMs && ttlClass !== "analytics") {
      f.push({
        severity: "warning",
        rule: "ttl-below-hour",
        specSection: "§3",
        message: `Largest TTL left is ${fmtMs(max)}, below 1 h; only high-volume analytics handlers may go that low. Use 24 h (if keys are still being written).`,
      });
    }
    if (ttlClass === "analytics" && max > TTL_POLICY.analyticsMaxMs * 1.01) {
      f.push({
        severity: "warning",
        rule: "analytics-ttl-above-hour",
        specSection: "§3",
        message: `Analytics handler keeps keys ${fmtMs(max)}: the policy is 1 h or less where Redis memory matters.`,
      });
    }
  }
  return f;
}

/** Rules whose inputs `dedup_handler_info` may leave out, and the label each needs. */
const RULE_NEEDS: Record<string, (i: InfoDeclaration) => boolean> = {
  "ttl-below-minimum": (i) => i.ttlMs !== null,
  "ttl-below-hour": (i) => i.ttlMs !== null,
  "critical-ttl-below-7d": (i) => i.ttlMs !== null && i.ttlClass !== null,
  "fail-open-critical": (i) => i.failureMode !== null && i.ttlClass !== null,
  "no-deduplicator": (i) => i.stack !== null,
  "dedup-outside-retry": (i) => i.stack !== null,
  "dedup-outside-poison-queue": (i) => i.stack !== null,
  "poison-queue-inside-retry": (i) => i.stack !== null,
  "no-timeout": (i) => i.leaseMs !== null,
  "timeout-not-below-lease": (i) => i.leaseMs !== null,
  "handler-p99-near-lease": (i) => i.leaseMs !== null,
  "db-side-effect-without-inbox": (i) => i.sideEffects !== null && (i.mode !== null || i.repository !== null),
  "kafka-output-without-transactions": (i) => i.sideEffects !== null && modeOfInfo(i) !== null,
  "deduplicator-in-transactions": (i) => i.stack !== null,
};

/**
 * The labels a handler's mode has no value for, each with what a reader shows instead ("does not
 * apply (transactions mode)"), so none is shown as 0, none or "not declared".
 */
export function notApplicable(d: DeclaredHandler): { label: string; text: string }[] {
  const tx = TRANSACTIONS_DECLARATION;
  return isTransactional(d) ? tx.inapplicable.map((label) => ({ label, text: tx.text })) : [];
}

/**
 * What the info alone says the handler loses (spec §10): the note's marking before the handler,
 * and a marking without a lease.
 */
function infoFindings(i: InfoDeclaration): Finding[] {
  const f: Finding[] = [];
  if (i.marking === "before") {
    f.push({
      severity: "error",
      rule: "marking-before-handler",
      specSection: "§10",
      message:
        'marks the key before the handler and never releases it (the design note\'s SET key "1" NX): the retry after a failed attempt and the redelivery after a crash mid-handler find the key and are swallowed as duplicates — the message is acked unprocessed. Its keys carry no position (a redelivery cannot be told from a re-publish) and no payload fingerprint (a reused UUID is swallowed). Claim processing:<token> under a lease, release it on failure, mark done:<topic>:<partition>:<offset> after the handler.',
    });
  }
  // The inbox has no lease to lose: its claim is an uncommitted row, rolled back with a crashed run.
  // Nor the transactions mode: it claims nothing, the offset commits with the outputs.
  if (
    i.leaseMs === null &&
    i.marking !== null &&
    i.marking !== INFO_MARKING.inbox &&
    i.marking !== INFO_MARKING.kafkaTransaction
  ) {
    f.push({
      severity: "warning",
      rule: "no-lease",
      specSection: "§10",
      message: `declares no lease (marking ${i.marking}): a crash mid-handler leaves its key for the whole window, so the redelivery is swallowed and the message lost, and a redelivery while the first run still works is swallowed even if that run then fails. Use marking lease (lease_ms).`,
    });
  }
  return f;
}

/** What a handler declares nothing about, each with the label that would say it. */
export function undeclared(d: DeclaredHandler): string[] {
  const i = d.info;
  if (d.source !== "info" || !i) return [];
  const out: string[] = [];
  const keyed = !isTransactional(d);
  if (keyed && i.ttlMs === null) out.push("declares no TTL: export dedup_handler_info with ttl_ms");
  if (keyed && i.ttlClass === null)
    out.push(
      `declares no TTL class: ${i.ttlMs === null ? "unknown" : `inferred ${d.setup.ttlClass} from ttl_ms`} (ttl_class)`,
    );
  if (i.marking === null) out.push("declares no marking: export dedup_handler_info with marking");
  if (i.stack === null) out.push("declares no stack: the order rules did not run (stack)");
  if (i.marking === "lease" && i.leaseMs === null)
    out.push("declares no lease: export dedup_handler_info with lease_ms");
  if (i.marking === "lease" && i.heartbeat === null)
    out.push("declares no heartbeat: the lease rules ran as if the lease is not renewed (heartbeat)");
  if (i.sideEffects === null)
    out.push(
      "declares no side effects: not known whether db-side-effect-without-inbox or kafka-output-without-transactions apply (side_effects)",
    );
  else if (
    modeOfInfo(i) === null &&
    (i.sideEffects.includes("kafka") || (i.sideEffects.includes("postgres") && !i.repository))
  )
    out.push(
      "declares no mode: not known whether its effects are made once by dedup, the inbox or Kafka transactions (mode)",
    );
  return out;
}

/**
 * The lint of one declaration: a registered setup through the library's `lintHandler`; an info
 * declaration through it too, keeping only the findings whose inputs the info declared, plus what
 * its marking and lease alone lose.
 */
export function lintDeclared(d: DeclaredHandler, handlerP99Seconds: number | null): Finding[] {
  const i = d.info;
  const found = lintHandler(d.setup, { handlerP99Seconds }).filter(
    (x) => !i || d.source !== "info" || (RULE_NEEDS[x.rule]?.(i) ?? true),
  );
  const extra = i && d.source === "info" ? infoFindings(i).filter((x) => !found.some((y) => y.rule === x.rule)) : [];
  return [...found, ...extra].map((x) => ({
    severity: x.severity,
    rule: x.rule,
    message: x.message,
    specSection: x.specSection,
  }));
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
  for (const s of r.value)
    if (s.value !== null && Number.isFinite(s.value)) out.set(`${s.labels.service}\u0000${s.labels.handler}`, s.value);
  return out;
}

/**
 * Builds `GET /api/lint`: the library's lint of the declared handlers (with their measured handler
 * p99 of the last hour, for `handler-p99-near-lease`), and the TTL policy per handler found in Redis.
 */
export async function getLint(ctx: ObserveContext): Promise<LintResponse> {
  await refreshFleetInfo(ctx);
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
          ttlClass: d.info && !d.info.ttlClass ? null : d.setup.ttlClass,
          ttlMs: isTransactional(d) || (d.info && d.info.ttlMs === null) ? null : d.setup.ttlMs,
          leaseMs: isTransactional(d) || (d.info && d.info.leaseMs === null) ? null : d.setup.leaseMs,
          handlerP99Seconds,
          source: d.source ?? "registry",
          unknown: undeclared(d),
          notApplicable: notApplicable(d),
          findings: lintDeclared(d, handlerP99Seconds),
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
