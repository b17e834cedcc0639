/**
 * `GET /api/records` against the real broker: a record published with `kcat` (the Watermill UUID
 * and Event-Type headers) is found by its UUID and opened by its position, and what the dashboard
 * shows is byte for byte what `kcat -C` reads at that offset. Reading joins no consumer group.
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { beforeAll, describe, expect, it } from "vitest";
import { recordsResponseSchema, type RecordView } from "@/lib/api/records";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { kcatPayloadAt, kcatProduce } from "@/server/testing/kcat";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET } from "./route";

const own = ownKafka();
configOfFile();
const BROKERS = own.brokers.join(",");
let topic: string;

const get = async (q: string) => {
  const res = await GET(new Request(`http://localhost/api/records?${q}`));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** `use(admin)` with an admin client of the suite's broker, connected for the call. */
async function withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka({ brokers: [...own.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

const listGroups = async (admin: Admin) => (await admin.listGroups()).groups.map((x) => x.groupId).sort();
const groups = () => withAdmin(listGroups);

/**
 * The groups made since `before` that read `topic`: a member subscribed to it or an offset committed
 * on it. Other files' groups come and go on the shared broker meanwhile; they read other topics.
 */
function groupsReading(topic: string, before: readonly string[]): Promise<string[]> {
  return withAdmin(async (admin) => {
    const added = (await listGroups(admin)).filter((g) => !before.includes(g));
    if (added.length === 0) return [];
    const reading: string[] = [];
    const described = (await admin.describeGroups(added)).groups;
    for (const g of added) {
      const subscribed =
        described.find((d) => d.groupId === g)?.members.some((m) => m.memberMetadata.includes(topic)) ?? false;
      const offsets = await admin.fetchOffsets({ groupId: g, topics: [topic] }).catch(() => []);
      if (subscribed || offsets.some((t) => t.partitions.some((p) => p.offset !== "-1"))) reading.push(g);
    }
    return reading;
  });
}

beforeAll(async () => {
  [topic] = (await own.topics("act-records", { "": 2 })).names as [string];
  useConfig({ KAFKA_BROKERS: BROKERS, CONSUMER_TOPICS: topic });
}, 60_000);

describe("GET /api/records", () => {
  it("finds a kcat-published record by its UUID and opens it by position; the payload equals kcat -C at that offset", async () => {
    const uuid = `01J${randomBytes(10).toString("hex").toUpperCase()}`;
    const payload = JSON.stringify({ user: "u-42", text: "héllo ✓", n: 7 });
    // Some older records first, and one on the other partition: the search has to pick the right one.
    for (let i = 0; i < 30; i++)
      await kcatProduce(BROKERS, topic, 0, `{"filler":${i}}`, {
        _watermill_message_uuid: `other-${i}`,
        "Event-Type": "filler",
      });
    await kcatProduce(BROKERS, topic, 1, payload, { _watermill_message_uuid: uuid, "Event-Type": "user.signed_up" });
    const before = await groups();

    const found = await get(`topic=${topic}&uuid=${uuid}`);
    expect(found.status).toBe(200);
    const search = recordsResponseSchema.parse(found.body);
    if (search.kind !== "search") throw new Error("expected a search answer");
    expect(search.complete).toBe(true);
    expect(search.records).toHaveLength(1);
    const hit = search.records[0]!;
    expect(hit).toMatchObject({ topic, partition: 1, uuid, payload: { encoding: "utf-8", text: payload } });
    expect(hit.headers).toEqual(
      expect.arrayContaining([{ key: "Event-Type", value: { encoding: "utf-8", text: "user.signed_up" } }]),
    );

    const opened = await get(`topic=${topic}&partition=${hit.partition}&offset=${hit.offset}`);
    expect(opened.status).toBe(200);
    const one = recordsResponseSchema.parse(opened.body);
    if (one.kind !== "record") throw new Error("expected a record answer");
    const rec: RecordView = one.record;
    const kcat = await kcatPayloadAt(BROKERS, topic, rec.partition, rec.offset);
    expect(Buffer.from(rec.payload!.text, "utf8").equals(kcat)).toBe(true);
    expect(rec.size).toBeGreaterThanOrEqual(Buffer.byteLength(payload));
    // Looking joined no consumer group (kcat -C above uses none either).
    expect(await groupsReading(topic, before)).toEqual([]);
  });

  it("shows a payload that is not UTF-8 as base64, naming the encoding", async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x41]);
    const uuid = `bin-${randomBytes(6).toString("hex")}`;
    await kcatProduce(BROKERS, topic, 0, bytes, { _watermill_message_uuid: uuid });
    const found = recordsResponseSchema.parse((await get(`topic=${topic}&uuid=${uuid}`)).body);
    if (found.kind !== "search") throw new Error("expected a search answer");
    expect(found.records[0]?.payload).toEqual({ encoding: "base64", text: bytes.toString("base64") });
  });

  it("answers 403 for a topic outside CONSUMER_TOPICS and their DLQs, 404 past the log end, 400 for a half position", async () => {
    expect((await get(`topic=__consumer_offsets&partition=0&offset=0`)).status).toBe(403);
    expect((await get(`topic=${topic}&partition=0&offset=999999`)).status).toBe(404);
    const half = await get(`topic=${topic}&partition=0`);
    expect(half.status).toBe(400);
    expect(half.body.detail).toMatch(/partition and offset, or uuid/);
  });

  it("says complete: false when the record bound stopped the scan", async () => {
    const { RECORD_SCAN_LIMITS } = await import("@/server/observe/records/scan");
    const saved = { ...RECORD_SCAN_LIMITS };
    RECORD_SCAN_LIMITS.records = 5;
    try {
      const r = recordsResponseSchema.parse((await get(`topic=${topic}&uuid=never-published`)).body);
      if (r.kind !== "search") throw new Error("expected a search answer");
      expect(r).toMatchObject({ complete: false, records: [] });
      expect(r.scanned.records).toBeLessThanOrEqual(5);
    } finally {
      Object.assign(RECORD_SCAN_LIMITS, saved);
    }
  });
});
