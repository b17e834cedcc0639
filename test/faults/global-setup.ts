/**
 * Starts the fault suite's own KRaft broker (127.0.0.1:19092, fresh data dir) before the cases and
 * stops it after them by its recorded pid, whichever process started the live one (the broker
 * restart case starts a new one). With `FAULTS_KAFKA_BROKERS` it starts none.
 */
import { rmSync } from "node:fs";
import { BROKER_PORT, prepareBroker, startBroker, stopBroker } from "./lib/kafka";
import { RESULTS_FILE } from "./lib/stream";

export async function setup(): Promise<() => Promise<void>> {
  rmSync(RESULTS_FILE, { force: true });
  if (process.env.FAULTS_KAFKA_BROKERS) {
    // The cases use that broker (lib/kafka.ts EXTERNAL_BROKERS) with their own topics.
    console.log(`[faults] FAULTS_KAFKA_BROKERS: the cases use ${process.env.FAULTS_KAFKA_BROKERS} (no own broker)`);
    return async () => undefined;
  }
  const t0 = Date.now();
  prepareBroker(true);
  const broker = await startBroker();
  console.log(
    `[faults] own Kafka broker on 127.0.0.1:${BROKER_PORT} (pid ${broker.pid}) ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  return async () => {
    await stopBroker();
    await broker.stop();
  };
}
