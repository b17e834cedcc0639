/**
 * `GET /api/handlers/{service}/{handler}`: one handler of the fleet as it declares itself — its
 * `dedup_handler_info` read from Prometheus, else what this process registered — with the lint of
 * that declaration, its window, lease and class, and its consumer group on Kafka joined by the
 * declared group. What it does not declare is inferred where it can be, and said so ("default,
 * inferred: keys live 24 h"); what cannot be inferred is `unknown` with the signal that would say
 * it, never a blank or a zero.
 */
import type { HandlerKeys, HandlerSelfResponse } from "@/lib/api/handlers";
import { handlerGroupId } from "@/names/kafka";
import { dedupKeyPrefix } from "@/names/keys";
import { HANDLER_INFO_METRIC, INFO_MARKING, TRANSACTIONS_DECLARATION } from "@/names/contract";
import { config } from "@/server/config";
import { windowFill } from "./capacity";
import type { ObserveContext } from "../core/ports";
import { assembleGroupView, consumerGroupDescriber } from "../kafka/consumer-group";
import { anonymiseGroup, ownGroup } from "../shared/consumer-privacy";
import { errorText } from "../core/errors";
import { inferredTtlClass, isTransactional, refreshFleetInfo } from "../shared/fleet-info";
import { declaredHandler, declaredPrefix, type DeclaredHandler } from "../core/handler-registry";
import { lintDeclared, lintObserved, undeclared } from "./lint";
import { got, inspectedHandlers } from "../shared/upstream";

type Self = HandlerSelfResponse;

const unknown = (field: string, what: string) => ({
  status: "unknown" as const,
  needs: `${HANDLER_INFO_METRIC}${field ? ` (${field})` : ""}`,
  detail: `declares no ${what}: export ${HANDLER_INFO_METRIC}`,
});

const fmt = (ms: number) =>
  ms >= 86_400_000
    ? `${+(ms / 86_400_000).toFixed(1)} d`
    : ms >= 3_600_000
      ? `${+(ms / 3_600_000).toFixed(1)} h`
      : ms >= 60_000
        ? `${+(ms / 60_000).toFixed(1)} min`
        : `${+(ms / 1000).toFixed(1)} s`;

const notApplicable = { status: "n/a" as const, detail: TRANSACTIONS_DECLARATION.text };

/** The window and class: declared, inferred from the declared window, inferred from the keys' TTLs, or unknown; none under the transactions mode. */
export function ttlOf(d: DeclaredHandler | undefined, keys: HandlerKeys | undefined): Self["ttl"] {
  if (isTransactional(d)) return notApplicable;
  const declaredMs = d && (d.source !== "info" || d.info?.ttlMs != null) ? d.setup.ttlMs : null;
  const declaredClass = d && (d.source !== "info" || d.info?.ttlClass) ? d.setup.ttlClass : null;
  if (declaredMs !== null) {
    if (declaredClass)
      return {
        status: "ok",
        ms: declaredMs,
        msSource: "declared",
        ttlClass: declaredClass,
        classSource: "declared",
        text: `${declaredClass} (declared: ${fmt(declaredMs)})`,
      };
    const c = inferredTtlClass(declaredMs);
    return {
      status: "ok",
      ms: declaredMs,
      msSource: "declared",
      ttlClass: c,
      classSource: "inferred",
      text: `${c}, inferred: declares ttl_ms ${fmt(declaredMs)}, no class`,
    };
  }
  const max = keys?.ttlObserved?.maxMs;
  if (max !== undefined) {
    const c = declaredClass ?? inferredTtlClass(max);
    return {
      status: "ok",
      ms: max,
      msSource: "observed",
      ttlClass: c,
      classSource: declaredClass ? "declared" : "inferred",
      text: `${c}, inferred: keys live ${fmt(max)}`,
    };
  }
  return unknown("ttl_ms", "TTL");
}

/** What the declaration says of lease, attempt limit, marking, failure mode and stack. */
function declaredFields(
  d: DeclaredHandler | undefined,
): Pick<Self, "lease" | "timeout" | "marking" | "failureMode" | "stack"> {
  if (!d)
    return {
      lease: unknown("lease_ms", "lease"),
      timeout: unknown("timeout_ms", "attempt limit"),
      marking: unknown("marking", "marking"),
      failureMode: unknown("failure_mode", "failure mode"),
      stack: unknown("stack", "stack"),
    };
  const i = d.info;
  const s = d.setup;
  const marking = i ? i.marking : s.marking === "naive" ? INFO_MARKING.before : s.marking;
  const leaseMs = i ? i.leaseMs : s.marking === "lease" ? s.leaseMs : null;
  return {
    lease:
      marking === null && leaseMs === null
        ? unknown("lease_ms", "lease")
        : {
            status: "ok",
            ms: leaseMs,
            text: isTransactional(d)
              ? TRANSACTIONS_DECLARATION.text
              : leaseMs === null
                ? `no lease (marking ${marking})`
                : `${fmt(leaseMs)} lease`,
          },
    timeout: { status: "ok", ms: i ? i.timeoutMs : s.timeoutMs },
    marking: marking === null ? unknown("marking", "marking") : { status: "ok", value: marking },
    failureMode:
      (i ? i.failureMode : s.failureMode) === null
        ? unknown("failure_mode", "failure mode")
        : { status: "ok", value: (i ? i.failureMode : s.failureMode)! },
    stack: i && !i.stack ? unknown("stack", "stack") : { status: "ok", names: [...(i?.stack ?? s.stack)] },
  };
}

/** Its topic: declared, else the `topic` label of its metrics. */
async function topicOf(
  ctx: ObserveContext,
  service: string,
  handler: string,
  d: DeclaredHandler | undefined,
): Promise<Self["topic"]> {
  if (d?.topic) return { status: "ok", value: d.topic, source: "declared" };
  const r = await got(ctx.metrics.instant("processed_rate"));
  const t = r.ok
    ? r.value.find((s) => s.labels.service === service && s.labels.handler === handler && s.labels.topic)?.labels.topic
    : undefined;
  return t ? { status: "ok", value: t, source: "metrics" } : unknown("topic", "topic");
}

/** Its consumer group's members, partitions and lag on its topic (Kafka's admin API; no consumer joins). */
async function consumerGroupOf(topic: Self["topic"], groupId: string): Promise<Self["consumerGroup"]> {
  if (topic.status !== "ok")
    return {
      status: "unknown",
      needs: `${HANDLER_INFO_METRIC} (topic)`,
      detail: "the topic it consumes is not known: export dedup_handler_info or its metrics' topic label",
    };
  const k = consumerGroupDescriber();
  if (!k) return { status: "unavailable", detail: "kafka: not configured (set KAFKA_BROKERS)" };
  try {
    await k.ready();
    const { offsets, groups } = await k.describer.read({ topic: topic.value, group: groupId });
    const g = groups[0];
    if (!g)
      return {
        status: "unavailable",
        detail: `consumer group ${groupId} has no members and no committed offsets on ${topic.value}`,
      };
    const view = assembleGroupView(offsets, g, { at: Date.now(), committed: g.committed }, null);
    const c = config();
    return {
      status: "ok",
      topic: topic.value,
      view: c.CONSUMER_DETAILS === "all" || ownGroup(groupId, c.SERVICE_NAME) ? view : anonymiseGroup(view),
    };
  } catch (e) {
    return { status: "unavailable", detail: errorText(e) };
  }
}

/**
 * Builds `GET /api/handlers/{service}/{handler}`, one build per handler for every viewer for 2 s
 * (each costs a few Kafka admin calls for its group).
 */
export function getHandlerSelf(ctx: ObserveContext, service: string, handler: string): Promise<HandlerSelfResponse> {
  return ctx.answers.get(
    `handler-self:${service}\u0000${handler}`,
    () => buildHandlerSelf(ctx, service, handler),
    2_000,
  );
}

async function buildHandlerSelf(ctx: ObserveContext, service: string, handler: string): Promise<HandlerSelfResponse> {
  const info = await refreshFleetInfo(ctx);
  const d = declaredHandler(service, handler);
  const prefix = d ? declaredPrefix(d) : dedupKeyPrefix(service, handler);
  const inspected = inspectedHandlers(ctx);
  const keys = inspected.ok ? inspected.value.find((h) => h.prefix === prefix) : undefined;
  const ttl = ttlOf(d, keys);
  const declaredGroup = d?.source === "info" ? (d.info?.group ?? null) : (d?.groupId ?? null);
  const groupId = declaredGroup ?? handlerGroupId(service, handler);
  const topic = await topicOf(ctx, service, handler, d);
  const fill =
    ttl.status === "ok"
      ? windowFill({
          ttlMs: ttl.ms,
          settledMinTtlMs: keys?.settledMinTtlMs ?? null,
          maxTtlMs: keys?.ttlObserved?.maxMs ?? null,
          processAgeMs: ctx.inspector ? null : process.uptime() * 1000,
          now: Date.now(),
        })
      : null;
  const p99 = await got(ctx.metrics.instant("handler_p99_1h"));
  const handlerP99 = p99.ok
    ? (p99.value.find((s) => s.labels.service === service && s.labels.handler === handler)?.value ?? null)
    : null;
  const observed = keys ? lintObserved(keys, ttl.status === "ok" ? ttl.ttlClass : null) : [];
  return {
    generatedAt: new Date().toISOString(),
    service,
    handler,
    declaration: d
      ? {
          status: "ok",
          source: d.source ?? "registry",
          runtime: d.info?.runtime ?? (d.source ? null : "node"),
          contract: d.info?.contract ?? null,
        }
      : { status: "unknown", needs: HANDLER_INFO_METRIC, detail: `declares nothing: export ${HANDLER_INFO_METRIC}` },
    infoRead: info.ok
      ? { status: "up", detail: `${info.value.length} handlers declare ${HANDLER_INFO_METRIC}` }
      : { status: "down", detail: info.detail },
    ttl,
    ...declaredFields(d),
    topic,
    prefix: { value: prefix, source: d && (d.prefix || d.source !== "info") ? "declared" : "convention" },
    group: { id: groupId, source: declaredGroup ? "declared" : "convention" },
    window: fill
      ? { status: "ok", ...fill }
      : ttl.status === "ok"
        ? { status: "unknown", needs: "dedup keys", detail: "no settled key sampled yet" }
        : ttl.status === "n/a"
          ? notApplicable
          : unknown("ttl_ms", "TTL"),
    lint: d
      ? {
          status: "ok",
          source: d.source ?? "registry",
          findings: [...lintDeclared(d, handlerP99), ...observed],
          unknown: undeclared(d),
        }
      : {
          status: "unknown",
          needs: HANDLER_INFO_METRIC,
          detail: `declares nothing: export ${HANDLER_INFO_METRIC}; only its keys' TTLs were checked${observed.length ? "" : " (none found)"}`,
        },
    consumerGroup: await consumerGroupOf(topic, groupId),
  };
}
