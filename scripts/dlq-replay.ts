/**
 * `npm run dlq:replay` — republishes the DLQ's messages to the topics they were poisoned on
 * (metadata `topic_poisoned`), with the same UUID and metadata minus the four poison keys.
 * Bounded (`--max`, default 10000; stops after 2 s without new messages), and safe to run twice:
 * its position is the committed offset of the group `<dlq>.replay`, so a second run replays only
 * what reached the DLQ since. Messages without a UUID (marshal failures) cannot be replayed and
 * are counted as skipped, and so are messages whose `topic_poisoned` is not in `CONSUMER_TOPICS`
 * (the allow-list `POST /api/dlq/redrive` applies too: both send through server/transport/dlq-redrive.ts).
 * With `DATABASE_URL`, each run is written into the audit trail, from which the dashboard draws its
 * chart marker (the app cannot see this process otherwise).
 *
 *   npm run dlq:replay                              # <DEMO_TOPIC>.dlq (default demo.events.dlq)
 *   npm run dlq:replay -- --topic my.dlq --max 100
 *   npm run dlq:replay -- --mode new-uuid --rate 20  # new UUIDs (a payload conflict's way out), 20 records/s
 *
 * `--mode`: `same-uuid` or `new-uuid` for every record; without it a `payload_conflict` record gets
 * a new UUID and every other record its own (a same-UUID re-drive of a conflict is refused: it would
 * loop). `--rate`: records per second (default `DLQ_REDRIVE_RATE`, 50).
 */
import { userInfo } from "node:os";
import { auditStore, recordAudit } from "@/server/audit";
import { config, ConfigError } from "@/server/config";
import { REDRIVE_MODES, type RedriveMode } from "@/names/dlq";
import { touchedList } from "@/lib/api/audit";
import { replayDlq, type ReplayDlqOptions } from "@/server/transport/dlq-replay";
import type { DlqResolutionInput } from "@/server/observe/records/dlq-state";
import { setDlqStateStore } from "@/server/observe/records/dlq-state";
import { recordResolutions, topicStates } from "@/server/observe/records/dlq-resolutions";
import { setRecordReader } from "@/server/observe/records/records";
import { KafkaTransport } from "@/server/transport";
import { optArg } from "./lib/args";

/** What a run replays, from the config and the arguments; exits with the reason when one is wrong. */
function runSettings() {
  let brokers: readonly string[] | undefined;
  let allowTopics: readonly string[] = [];
  let dlq: string;
  try {
    brokers = config().KAFKA_BROKERS;
    allowTopics = config().CONSUMER_TOPICS;
    dlq = config().demoDlqTopic;
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`[dlq:replay] ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
  if (!brokers?.length) {
    console.error(
      "[dlq:replay] KAFKA_BROKERS is not set (the embedded demo's DLQ lives inside the server process and is replayed by the workshop). Set KAFKA_BROKERS=127.0.0.1:9092.",
    );
    process.exit(1);
  }
  const topic = optArg("topic") ?? dlq;
  const max = Number(optArg("max") ?? 10_000);
  if (!Number.isInteger(max) || max < 1 || max > 1_000_000) {
    console.error("[dlq:replay] --max must be an integer in [1, 1000000]");
    process.exit(1);
  }
  const modeArg = optArg("mode");
  if (modeArg !== undefined && !(REDRIVE_MODES as readonly string[]).includes(modeArg)) {
    console.error(
      `[dlq:replay] --mode must be one of ${REDRIVE_MODES.join(", ")} (none: new-uuid for a payload conflict, else same-uuid)`,
    );
    process.exit(1);
  }
  const mode = modeArg as RedriveMode | undefined;
  const rate = Number(optArg("rate") ?? config().DLQ_REDRIVE_RATE);
  if (!Number.isInteger(rate) || rate < 1 || rate > 10_000) {
    console.error("[dlq:replay] --rate must be an integer in [1, 10000] (records per second)");
    process.exit(1);
  }
  return { brokers, allowTopics, topic, max, mode, rate };
}

type RunSettings = ReturnType<typeof runSettings>;

/** Replays the DLQ, prints what went where and what was skipped; what it touched, for the audit entry. */
async function replay(transport: KafkaTransport, s: RunSettings, states: Awaited<ReturnType<typeof dlqStates>>) {
  const { topic, max, allowTopics, mode, rate } = s;
  const touched = { uuids: [] as string[], sourceOffsets: [] as string[], destinationOffsets: [] as string[] };
  // What the run touched goes into its audit entry (the first 100 of each kind and the count).
  const onReplayed: ReplayDlqOptions["onReplayed"] = (msg, to, at) => {
    states.options.onReplayed?.(msg, to, at);
    touched.uuids.push(msg.uuid);
    touched.sourceOffsets.push(`${topic}/${msg.context.partition}/${msg.context.offset}`);
    touched.destinationOffsets.push(`${at.topic}/${at.partition ?? "?"}/${at.offset ?? "?"}`);
  };
  const r = await replayDlq(transport, topic, {
    max,
    allowTopics,
    mode,
    ratePerSecond: rate,
    ...states.options,
    onReplayed,
  });
  if (r.notOpen)
    console.log(`[dlq:replay] left ${r.notOpen} alone: already re-driven or discarded (the dashboard's DLQ states)`);
  const where =
    Object.entries(r.byTopic)
      .map(([t, n]) => `${n} → ${t}`)
      .join(", ") || "nothing new";
  console.log(
    `[dlq:replay] ${topic}: replayed ${r.replayed} (${where}) at most ${rate}/s; skipped ${r.skipped} without a UUID or origin topic, or poisoned on a topic outside CONSUMER_TOPICS (${allowTopics.join(", ")})`,
  );
  for (const [why, n] of Object.entries(r.skippedWhy)) console.log(`[dlq:replay]   skipped ${n}: ${why}`);
  return {
    matched: r.replayed + r.skipped,
    changed: r.replayed,
    touched: {
      uuids: touchedList(touched.uuids),
      sourceOffsets: touchedList(touched.sourceOffsets),
      destinationOffsets: touchedList(touched.destinationOffsets),
    },
  };
}

async function main(): Promise<void> {
  const s = runSettings();
  const { brokers, topic, max, mode, rate } = s;
  const transport = new KafkaTransport(brokers);
  // The run's audit entry is the dashboard's chart marker of this replay: in PostgreSQL
  // (DATABASE_URL, the trail the app reads) it reaches the app; without it nothing can.
  const base = {
    who: `cli (${userInfo().username})`,
    action: "dlq.replay",
    filter: { topic, max, ...(mode ? { mode } : {}), rate },
    dryRun: false,
    scope: { service: config().SERVICE_NAME },
  };
  const states = await dlqStates(topic, base.who);
  try {
    const done = await replay(transport, s, states);
    await recordRun({ ...base, matched: done.matched, changed: done.changed, result: "ok", touched: done.touched });
  } catch (e) {
    await recordRun({
      ...base,
      matched: null,
      changed: null,
      result: `error: ${e instanceof Error ? e.message : String(e)}`,
    });
    throw e;
  } finally {
    await states.save();
    await transport.close();
  }
  process.exit(0);
}

/**
 * The DLQ states of `topic` the dashboard keeps (PostgreSQL with `DATABASE_URL`): records already
 * re-driven or discarded are left alone, and each one this run re-drives becomes `redriven` by `who`.
 */
async function dlqStates(
  topic: string,
  who: string,
): Promise<{ options: Pick<ReplayDlqOptions, "isOpen" | "onReplayed">; save: () => Promise<void> }> {
  const states = await topicStates(topic);
  const done: DlqResolutionInput[] = [];
  return {
    options: {
      isOpen: (p) => states.of(p).state === "open",
      onReplayed: (msg, _topic, to) => {
        if (msg.context.partition !== undefined && msg.context.offset !== undefined)
          done.push({ partition: msg.context.partition, offset: msg.context.offset, state: "redriven", who, to });
      },
    },
    async save() {
      try {
        await recordResolutions(topic, done);
        if (done.length && !config().DATABASE_URL)
          console.log("[dlq:replay] DATABASE_URL is not set: the dashboard will not see these records as re-driven");
      } catch (e) {
        console.error(
          `[dlq:replay] could not record ${done.length} records as re-driven: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
      await setDlqStateStore(null);
      await setRecordReader(null);
    },
  };
}

/** Records the run in the audit trail when it is PostgreSQL, else says why the dashboard will not show it. */
async function recordRun(entry: Parameters<typeof recordAudit>[0]): Promise<void> {
  if (auditStore().kind !== "postgres") {
    console.log(
      "[dlq:replay] not in the audit trail: DATABASE_URL is not set, so the dashboard shows no marker for this run",
    );
    return;
  }
  if (await recordAudit(entry))
    console.log("[dlq:replay] recorded in the audit trail (the dashboard marks it on the service's charts)");
  await auditStore().close();
}

void main().catch((e: unknown) => {
  console.error(`[dlq:replay] ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
