/**
 * `kcat` (Debian's kafkacat) from tests: what a user would publish and read with the Kafka CLI,
 * independent of kafkajs — a record the dashboard shows must equal what `kcat -C` reads.
 */
import { execFile } from "node:child_process";

function run(
  args: readonly string[],
  input?: Buffer | string,
  limits: { timeout: number; maxBuffer: number } = { timeout: 20_000, maxBuffer: 16 * 1024 * 1024 },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile("kcat", [...args], { encoding: "buffer", ...limits }, (err, stdout, stderr) => {
      if (err) reject(new Error(`kcat ${args.join(" ")}: ${err.message} ${stderr.toString()}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Publishes one record (`kcat -P`) with headers to `topic`/`partition`; `payload` read as one record (no delimiter). */
export async function kcatProduce(
  brokers: string,
  topic: string,
  partition: number,
  payload: Buffer | string,
  headers: Record<string, string>,
): Promise<void> {
  const h = Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}=${v}`]);
  // -D with a delimiter that is not in the payload: the whole input is one record.
  await run(["-P", "-b", brokers, "-t", topic, "-p", String(partition), "-D", "\u0001", ...h], payload);
}

/** The payload of the record at `topic`/`partition`/`offset`, as `kcat -C` reads it (raw bytes). */
export function kcatPayloadAt(brokers: string, topic: string, partition: number, offset: string): Promise<Buffer> {
  return run([
    "-C",
    "-b",
    brokers,
    "-t",
    topic,
    "-p",
    String(partition),
    "-o",
    offset,
    "-c",
    "1",
    "-e",
    "-q",
    "-f",
    "%s",
  ]);
}

/** Offsets (`%o`) of every record of `topic`/`partition`, oldest first. */
export async function kcatOffsets(brokers: string, topic: string, partition: number): Promise<string[]> {
  const out = await run([
    "-C",
    "-b",
    brokers,
    "-t",
    topic,
    "-p",
    String(partition),
    "-o",
    "beginning",
    "-e",
    "-q",
    "-f",
    "%o\n",
  ]);
  return out.toString().split("\n").filter(Boolean);
}

/**
 * Publishes one keyed record (`kcat -P -K`) as a Java producer would: the key picks the partition
 * with Kafka's default partitioner (murmur2, `-X partitioner=murmur2_random`), not librdkafka's CRC32.
 */
export async function kcatProduceKeyed(
  brokers: string,
  topic: string,
  key: string,
  payload: string,
  headers: Record<string, string>,
): Promise<void> {
  const h = Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}=${v}`]);
  await run(
    ["-P", "-b", brokers, "-t", topic, "-X", "partitioner=murmur2_random", "-K", "\u0002", "-D", "\u0001", ...h],
    `${key}\u0002${payload}`,
  );
}

/** Every record of `topic` (all partitions) formatted by kcat's `-f` (e.g. `%k %p %o\n`), in kcat's order. */
export async function kcatFormat(brokers: string, topic: string, format: string): Promise<string> {
  return (await run(["-C", "-b", brokers, "-t", topic, "-o", "beginning", "-e", "-q", "-f", format])).toString();
}

/**
 * The value of header `name` of every record of `topic` (all partitions), as a kcat consumer with
 * `isolation.level` reads them: `read_committed` skips the records of aborted (and still open)
 * transactions, `read_uncommitted` (kcat's default) shows them too. A record without it gives "".
 */
export async function kcatHeaderValues(
  brokers: string,
  topic: string,
  name: string,
  isolation: "read_committed" | "read_uncommitted",
): Promise<string[]> {
  const out = await run(
    [
      "-C",
      "-b",
      brokers,
      "-t",
      topic,
      "-o",
      "beginning",
      "-e",
      "-q",
      "-X",
      `isolation.level=${isolation}`,
      "-f",
      "%h\n",
    ],
    undefined,
    { timeout: 180_000, maxBuffer: 512 * 1024 * 1024 },
  );
  const prefix = `${name}=`;
  return out
    .toString()
    .split("\n")
    .filter(Boolean)
    .map(
      (line) =>
        line
          .split(",")
          .find((kv) => kv.startsWith(prefix))
          ?.slice(prefix.length) ?? "",
    );
}
