/**
 * Payload masking on the real broker, through the routes: with `WORKSHOP_TOKEN` set, an anonymous
 * request is a viewer (no `unmasked`) and a request with the token an admin. The viewer's record
 * and DLQ answers show masked fields as `***`, removed fields gone and a `masked` list; a search
 * by a masked UUID and a handler filter by a removed handler find nothing; the admin sees every
 * record whole, and kcat reads the original bytes still in the log.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { dlqResponseSchema } from "@/lib/api/dlq";
import { MASK_MARKER, type MaskRule } from "@/lib/api/masking";
import { recordsResponseSchema, type RecordView } from "@/lib/api/records";
import {
  HANDLER_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { kcatFormat, kcatPayloadAt, kcatProduce } from "@/server/testing/kcat";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET as getDlq } from "../dlq/route";
import { GET as getRecords } from "./route";

const own = ownKafka();
configOfFile();
const BROKERS = own.brokers.join(",");
const TOKEN = randomBytes(16).toString("hex");
const ADMIN = { authorization: `Bearer ${TOKEN}` };
let topic: string;
let dlq: string;

const CARD = "4111 1111 1111 1111";
const EMAIL = "ann@example.com";
const uuid = `hc-${randomBytes(6).toString("hex")}`;
const dlqUuid = `hc-dlq-${randomBytes(6).toString("hex")}`;
const payload = JSON.stringify({ card: { number: CARD, exp: "12/30" }, customer: { email: EMAIL, id: 42 } });

async function call(
  route: (req: Request) => Promise<Response>,
  path: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await route(new Request(`http://localhost${path}`, { headers }));
  const body: unknown = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}
const search = async (t: string, u: string, headers?: Record<string, string>) => {
  const r = recordsResponseSchema.parse(await call(getRecords, `/api/records?topic=${t}&uuid=${u}`, headers));
  if (r.kind !== "search") throw new Error("expected a search answer");
  return r.records;
};
const header = (r: RecordView, key: string) => r.headers.filter((h) => h.key === key).map((h) => h.value.text);

beforeAll(async () => {
  [topic, dlq] = (await own.topics("hc-mask", { "": 1, ".dlq": 1 })).names as [string, string];
  const rules: MaskRule[] = [
    { topic, pointer: "/card/number", action: "MASK" },
    { topic, pointer: "/customer/email", action: "REMOVE" },
    { topic: "*", header: "x-user-email", action: "REMOVE" },
    { topic, header: REASON_POISONED_KEY, action: "MASK" },
    { topic, header: HANDLER_POISONED_KEY, action: "REMOVE" },
    // On the DLQ topic only: its records' UUIDs are masked, the main topic's are not.
    { topic: dlq, header: WATERMILL_UUID_HEADER, action: "MASK" },
  ];
  useConfig({
    KAFKA_BROKERS: BROKERS,
    CONSUMER_TOPICS: topic,
    WORKSHOP_TOKEN: TOKEN,
    MASK_RULES: JSON.stringify(rules),
  });
  await kcatProduce(BROKERS, topic, 0, payload, {
    [WATERMILL_UUID_HEADER]: uuid,
    "x-user-email": EMAIL,
    "Event-Type": "card.charged",
  });
  await kcatProduce(BROKERS, topic, 0, `card=${CARD}`, { [WATERMILL_UUID_HEADER]: `${uuid}-text` });
  await kcatProduce(BROKERS, dlq, 0, payload, {
    [WATERMILL_UUID_HEADER]: dlqUuid,
    [REASON_POISONED_KEY]: `card ${CARD} declined`,
    [HANDLER_POISONED_KEY]: "on-card-charged",
    [TOPIC_POISONED_KEY]: topic,
    [SUBSCRIBER_POISONED_KEY]: "billing-1",
    "x-user-email": EMAIL,
  });
}, 60_000);

describe("payload masking for a viewer", () => {
  it("GET /api/records masks and removes the configured fields for a viewer and shows them whole to an admin", async () => {
    const [viewed] = await search(topic, uuid);
    expect(viewed).toBeDefined();
    expect(JSON.parse(viewed!.payload!.text)).toEqual({
      card: { number: MASK_MARKER, exp: "12/30" },
      customer: { id: 42 },
    });
    expect(header(viewed!, "x-user-email")).toEqual([]);
    expect(header(viewed!, "Event-Type")).toEqual(["card.charged"]);
    expect(viewed!.masked).toEqual([
      { in: "payload", field: "/card/number", action: "MASK" },
      { in: "payload", field: "/customer/email", action: "REMOVE" },
      { in: "header", field: "x-user-email", action: "REMOVE" },
    ]);
    expect(JSON.stringify(viewed)).not.toMatch(new RegExp(`${CARD}|${EMAIL}`));

    const [whole] = await search(topic, uuid, ADMIN);
    expect(whole!.payload!.text).toBe(payload);
    expect(header(whole!, "x-user-email")).toEqual([EMAIL]);
    expect(whole!.masked).toBeUndefined();

    // Opened by position, the same; and the log still holds the original.
    const one = recordsResponseSchema.parse(
      await call(getRecords, `/api/records?topic=${topic}&partition=0&offset=${viewed!.offset}`),
    );
    if (one.kind !== "record") throw new Error("expected a record answer");
    expect(one.record.payload).toEqual(viewed!.payload);
    expect((await kcatPayloadAt(BROKERS, topic, 0, viewed!.offset)).toString()).toBe(payload);
    expect(await kcatFormat(BROKERS, topic, "%h\n")).toContain(`x-user-email=${EMAIL}`);
  });

  it("masks a payload that is not JSON whole for a viewer, and says so", async () => {
    const [viewed] = await search(topic, `${uuid}-text`);
    expect(viewed!.payload).toEqual({ encoding: "utf-8", text: MASK_MARKER });
    expect(viewed!.masked).toContainEqual({ in: "payload", field: "/card/number", action: "MASK", whole: true });
    expect((await search(topic, `${uuid}-text`, ADMIN))[0]!.payload!.text).toBe(`card=${CARD}`);
  });

  it("a search never matches a masked value for a viewer: not the masked UUID of a DLQ record, not a masked field's value", async () => {
    expect(await search(dlq, dlqUuid)).toEqual([]);
    expect(await search(topic, encodeURIComponent(CARD))).toEqual([]);
    const [found] = await search(dlq, dlqUuid, ADMIN);
    expect(found).toMatchObject({ uuid: dlqUuid, payload: { text: payload } });
    // Opened by position, the viewer sees the DLQ copy masked by its origin topic's rules and the DLQ's own.
    const one = recordsResponseSchema.parse(
      await call(getRecords, `/api/records?topic=${dlq}&partition=0&offset=${found!.offset}`),
    );
    if (one.kind !== "record") throw new Error("expected a record answer");
    expect(one.record.uuid).toBe(MASK_MARKER);
    expect(JSON.parse(one.record.payload!.text)).toEqual({
      card: { number: MASK_MARKER, exp: "12/30" },
      customer: { id: 42 },
    });
  });

  it("GET /api/dlq shows the viewer masked and removed header texts, filters on what the viewer sees, and shows an admin the record whole", async () => {
    const viewer = dlqResponseSchema.parse(await call(getDlq, `/api/dlq?topic=${dlq}&state=any`));
    expect(viewer.entries).toHaveLength(1);
    const e = viewer.entries[0]!;
    expect(e).toMatchObject({
      uuid: MASK_MARKER,
      reason: MASK_MARKER,
      handler: "",
      subscriber: "billing-1",
      topicPoisoned: topic,
      redrivable: true,
    });
    expect(e.masked).toEqual(
      expect.arrayContaining([
        { in: "header", field: REASON_POISONED_KEY, action: "MASK" },
        { in: "header", field: HANDLER_POISONED_KEY, action: "REMOVE" },
      ]),
    );
    expect(JSON.stringify(viewer)).not.toContain(CARD);
    expect(
      dlqResponseSchema.parse(await call(getDlq, `/api/dlq?topic=${dlq}&state=any&handler=on-card-charged`)).entries,
    ).toEqual([]);

    const admin = dlqResponseSchema.parse(
      await call(getDlq, `/api/dlq?topic=${dlq}&state=any&handler=on-card-charged`, ADMIN),
    );
    expect(admin.entries).toHaveLength(1);
    expect(admin.entries[0]).toMatchObject({
      uuid: dlqUuid,
      reason: `card ${CARD} declined`,
      handler: "on-card-charged",
    });
    expect(admin.entries[0]!.masked).toBeUndefined();
  });
});
