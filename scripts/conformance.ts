/**
 * `npm run conformance` — checks a running consumer, in any language, against docs/CONTRACT.md:
 * drives its handler over Kafka (fresh UUIDs, copies, a payload conflict, a poison record, a
 * failure then success), reads its keys in Redis and its /metrics, and prints each clause held,
 * broken or not measured, by name. Exits 1 when a clause is broken, 2 on bad arguments.
 *
 *   npm run conformance -- --metrics http://127.0.0.1:9464/metrics --redis redis://127.0.0.1:6379 \
 *     --brokers 127.0.0.1:9092 --topic orders --service billing --handler on-order
 *   … --header Event-Type=review.created      # a header every record carries (repeatable)
 *   … --phase-ms 20000                        # longest wait for one phase
 *   … --json                                  # the report as JSON on stdout ({ outcomes, broken })
 *
 * **It publishes records to the topic and its DLQ receives one**: point it at a test deployment.
 */
import { flag, intArg, optArg } from "./lib/args";
import { formatReport, runConformance } from "./lib/conformance/run";

function headers(argv: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  argv.forEach((a, i) => {
    if (a !== "--header") return;
    const kv = argv[i + 1] ?? "";
    const at = kv.indexOf("=");
    if (at <= 0) throw new RangeError(`conformance: --header takes name=value, got "${kv}"`);
    out[kv.slice(0, at)] = kv.slice(at + 1);
  });
  return out;
}

async function main(): Promise<number> {
  const need = ["metrics", "redis", "brokers", "topic", "service", "handler"] as const;
  const missing = need.filter((n) => !optArg(n));
  if (missing.length) {
    console.error(
      `conformance: missing ${missing.map((m) => `--${m}`).join(", ")} (see the usage at the top of scripts/conformance.ts)`,
    );
    return 2;
  }
  const target = `${optArg("service")}/${optArg("handler")}`;
  const report = await runConformance({
    metricsUrl: optArg("metrics")!,
    redisUrl: optArg("redis")!,
    brokers: optArg("brokers")!.split(","),
    topic: optArg("topic")!,
    service: optArg("service")!,
    handler: optArg("handler")!,
    headers: headers(process.argv),
    phaseMs: intArg("phase-ms", 20_000, 1_000, 600_000),
    log: (line) => console.error(`[conformance] ${line}`),
  });
  console.log(flag("json") ? JSON.stringify(report, null, 2) : formatReport(report, target));
  return report.broken.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`conformance: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  },
);
