// Exits 0 when a kafkajs admin client can list topics on the broker; with --create name:partitions…
// also creates those topics when missing and prints one line per topic (created, or already there).
// Used by scripts/stack.sh (readiness and demo topics).
import kafkajs from "kafkajs";

const { Kafka, logLevel } = kafkajs;
const [broker, flag, ...specs] = process.argv.slice(2);
const kafka = new Kafka({
  clientId: "dedup-health-stack",
  brokers: [broker ?? "127.0.0.1:9092"],
  logLevel: logLevel.NOTHING,
  connectionTimeout: 2000,
  requestTimeout: 5000,
  retry: { retries: 2 },
});
const admin = kafka.admin();
try {
  await admin.connect();
  const have = new Set(await admin.listTopics());
  if (flag === "--create") {
    const topics = specs
      .map((s) => s.split(":"))
      .filter(([name]) => !have.has(name))
      .map(([topic, n]) => ({ topic, numPartitions: Number(n ?? 1), replicationFactor: 1 }));
    if (topics.length) await admin.createTopics({ topics, waitForLeaders: true });
    // What stack.sh prints: each topic asked for, created now or already there.
    for (const [name, n] of specs.map((s) => s.split(":")))
      console.log(
        `${name} (${n ?? 1} partition${n === "1" || !n ? "" : "s"}) ${have.has(name) ? "already there" : "created"}`,
      );
  }
  await admin.disconnect();
  process.exit(0);
} catch (e) {
  if (flag === "--create") console.error(String(e?.message ?? e));
  try {
    await admin.disconnect();
  } catch {}
  process.exit(1);
}
