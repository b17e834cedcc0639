/**
 * The Java reference consumer (examples/java-consumer) as a test starts it: one process per test
 * with its own service, topic and metrics port, stopped by its pid. The jar is built by the stack
 * step (`scripts/stack.sh up java-consumer`, which `npm test` runs first), never inside a test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./net";

/** The shaded jar `mvn -q -B package` builds. */
export const JAVA_CONSUMER_JAR = join(process.cwd(), "examples/java-consumer/target/java-consumer.jar");

/** Options of {@link startJavaConsumer}: its environment (examples/java-consumer/README.md). */
export interface JavaConsumerOptions {
  brokers: readonly string[];
  redisUrl: string;
  topic: string;
  service: string;
  handler: string;
  /** More environment variables (TTL_MS, LEASE_MS, FAILURE_MODE, …). */
  env?: Record<string, string>;
}

/** A running process of the fleet: its metrics URL, its pid and its stop. */
export interface RunningConsumer {
  metricsUrl: string;
  pid: number;
  /** Everything it printed so far. */
  output(): string;
  /** SIGTERM to its process group, SIGKILL after 10 s; resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Starts `command` in its own process group and resolves once a line of its output matches
 * `ready` (rejects with the output when it exits first or after `timeoutMs`).
 */
export async function startProcess(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  ready: RegExp,
  metricsUrl: string,
  timeoutMs = 60_000,
): Promise<RunningConsumer> {
  const child: ChildProcess = spawn(command, [...args], {
    env: { ...process.env, ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} did not print ${ready} within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const onData = (b: Buffer) => {
      out += b.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it was ready:\n${out}`));
    });
  });
  const pid = child.pid!;
  return {
    metricsUrl,
    pid,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(-pid, "SIGTERM");
      const killer = setTimeout(() => process.kill(-pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Starts the Java consumer; resolves once it was assigned its partitions. */
export async function startJavaConsumer(o: JavaConsumerOptions): Promise<RunningConsumer> {
  if (!existsSync(JAVA_CONSUMER_JAR)) {
    throw new Error(
      `${JAVA_CONSUMER_JAR} is missing: build it with \`bash scripts/stack.sh up java-consumer\` (npm test's stack step does) or \`mvn -q -B package\` in examples/java-consumer`,
    );
  }
  const port = await freePort();
  const env = {
    KAFKA_BROKERS: o.brokers.join(","),
    REDIS_URL: o.redisUrl,
    TOPIC: o.topic,
    SERVICE: o.service,
    HANDLER: o.handler,
    METRICS_PORT: String(port),
    ...o.env,
  };
  return startProcess(
    "java",
    ["-jar", JAVA_CONSUMER_JAR],
    env,
    /assigned \d+ partition/,
    `http://127.0.0.1:${port}/metrics`,
  );
}
