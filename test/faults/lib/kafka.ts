/**
 * The fault suite's own single-node KRaft broker on 127.0.0.1:19092 (controller 19093), built from
 * the jars `npm run stack:up` fetched into .stack/kafka-libs and infra/kafka/server.properties.template
 * with other ports and its own data dir under .stack/faults/kafka. Never the shared broker on 9092.
 *
 * The global setup starts it once per suite; the broker-restart case stops it (SIGTERM by pid) and
 * starts it again on the same data dir. The live pid is in .stack/faults/kafka/broker.pid, which the
 * global teardown (and scripts/test-faults.sh) stop.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { FAULTS_DIR, PIDS_DIR, portOpen, ROOT, rmrf, sleep, startProc, type Proc } from "./procs";

/** The broker's port; FAULTS_BROKER_PORT moves it (two worktrees running the suite at once). @default 19092 */
export const BROKER_PORT = Number(process.env.FAULTS_BROKER_PORT ?? 19092);
/** The controller's port; FAULTS_CONTROLLER_PORT moves it. @default 19093 */
export const CONTROLLER_PORT = Number(process.env.FAULTS_CONTROLLER_PORT ?? 19093);
/** `KAFKA_BROKERS` of the suite's broker. */
export const FAULT_BROKERS = externalBrokers() ?? [`127.0.0.1:${BROKER_PORT}`];

/**
 * The suite's external broker when `FAULTS_KAFKA_BROKERS` is set (`host:port,…`): the global setup
 * then starts none and the cases use their own topics there (a machine where 19092 is another
 * run's; the broker-restart case needs the suite's own). Null: the suite's own broker.
 */
export const EXTERNAL_BROKERS = externalBrokers();

function externalBrokers(): string[] | null {
  return process.env.FAULTS_KAFKA_BROKERS?.split(",").filter(Boolean) ?? null;
}

const DIR = join(FAULTS_DIR, "kafka");
const PID_FILE = join(DIR, "broker.pid");
const LIBS = join(ROOT, ".stack", "kafka-libs");

function jvm(): string[] {
  return [
    "-Xms256m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    `-Dlog4j.configuration=file:${join(ROOT, "infra", "kafka", "log4j.properties")}`,
    "-cp",
    `${LIBS}/*`,
  ];
}

/** Writes server.properties (other ports, own data dir) and formats the storage. `fresh` wipes the data dir first. */
export function prepareBroker(fresh: boolean): string {
  if (!existsSync(join(LIBS, ".complete")))
    throw new Error("no Kafka jars in .stack/kafka-libs: run `npm run stack:up` once");
  if (fresh) rmrf(DIR);
  mkdirSync(DIR, { recursive: true });
  const props = readFileSync(join(ROOT, "infra", "kafka", "server.properties.template"), "utf8")
    .replaceAll("@DATA_DIR@", join(DIR, "data"))
    .replaceAll("9095", String(CONTROLLER_PORT))
    .replaceAll("9092", String(BROKER_PORT));
  if (!props.includes(`:${BROKER_PORT}`) || props.includes(":9092") || !props.includes(`:${CONTROLLER_PORT}`))
    throw new Error(`server.properties.template: could not move the broker to ports ${BROKER_PORT}/${CONTROLLER_PORT}`);
  const file = join(DIR, "server.properties");
  writeFileSync(file, props);
  if (!existsSync(join(DIR, "data", "meta.properties"))) {
    const id = execFileSync("java", [...jvm(), "kafka.tools.StorageTool", "random-uuid"], { encoding: "utf8" }).trim();
    execFileSync("java", [...jvm(), "kafka.tools.StorageTool", "format", "-t", id, "-c", file], { stdio: "ignore" });
  }
  return file;
}

/** True when a kafkajs admin can list topics on the suite's broker. */
export async function brokerReady(): Promise<boolean> {
  const admin = new Kafka({
    clientId: "faults-ready",
    brokers: FAULT_BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    await admin.listTopics();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Starts the broker (storage already prepared) and waits until it serves metadata. */
export async function startBroker(): Promise<Proc> {
  if (await portOpen(BROKER_PORT))
    throw new Error(
      `127.0.0.1:${BROKER_PORT} is taken: a broker of an earlier fault run still runs? (scripts/test-faults.sh stops recorded pids)`,
    );
  const file = join(DIR, "server.properties");
  const p = startProc("kafka-faults", "java", [...jvm(), "kafka.Kafka", file]);
  writeFileSync(PID_FILE, `${p.pid}\n`);
  const deadline = Date.now() + 120_000;
  while (!(await brokerReady())) {
    if (!p.alive()) throw new Error(`the fault broker exited:\n${p.logs()}`);
    if (Date.now() > deadline) {
      await p.stop();
      throw new Error(`the fault broker was not ready within 120 s:\n${p.logs()}`);
    }
    await sleep(500);
  }
  return p;
}

/** The pid of the running broker as recorded, or null. */
export function brokerPid(): number | null {
  if (!existsSync(PID_FILE)) return null;
  const pid = Number(readFileSync(PID_FILE, "utf8").trim());
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** Stops the recorded broker by pid (SIGTERM, SIGKILL after `graceMs`), whoever started it. */
export async function stopBroker(graceMs = 20_000): Promise<void> {
  const pid = brokerPid();
  if (pid === null) return;
  process.kill(pid, "SIGTERM");
  const end = Date.now() + graceMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      // Started by another test process: its record is ours to clear.
      rmrf(join(PIDS_DIR, `kafka-faults.${pid}`));
      return;
    }
    if (Date.now() > end) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        return;
      }
    }
    await sleep(200);
  }
}

/** A kafkajs admin of the suite's broker (disconnect it). */
export function faultAdmin() {
  return new Kafka({ clientId: "faults-admin", brokers: FAULT_BROKERS, logLevel: logLevel.NOTHING }).admin();
}
