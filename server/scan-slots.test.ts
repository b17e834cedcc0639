import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useConfig } from "@/server/testing/app-config";
import {
  OPERATOR_SCANS_MAX,
  READER_SCANS_MAX,
  READER_SCANS_PER_CLIENT,
  scansInFlight,
  withScanSlot,
} from "./scan-slots";

const TOKEN = "t".repeat(32);
/** A reader on the network (the app bound beyond loopback sees it through Next's X-Forwarded-For). */
const reader = (ip: string) =>
  new Request("http://localhost/api/dlq", { headers: { "x-forwarded-for": ip, host: "dash.example" } });
const operator = () =>
  new Request("http://localhost/api/dlq", {
    headers: { authorization: `Bearer ${TOKEN}`, "x-forwarded-for": "10.0.0.99", host: "dash.example" },
  });

/** A scan that runs until `release()`. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { release, scan: () => done.then(() => "scanned") };
}

const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status?: number; retryAfterSeconds?: number }) => (e.retryAfterSeconds === 1 ? e.status : -1),
  );

describe("record scans in flight are bounded: readers share a few slots, operators have their own", () => {
  beforeEach(() => useConfig({ WORKSHOP_TOKEN: TOKEN }));
  afterEach(() => useConfig());

  it("a reader runs at most its share at once; readers together at most the readers' slots; beyond: 429 with Retry-After", async () => {
    const h = held();
    const own = Array.from({ length: READER_SCANS_PER_CLIENT + 1 }, () =>
      status(withScanSlot(reader("203.0.113.1"), h.scan)),
    );
    const others = Array.from({ length: READER_SCANS_MAX }, (_, i) =>
      status(withScanSlot(reader(`203.0.113.${10 + i}`), h.scan)),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(scansInFlight().readers).toBe(READER_SCANS_MAX);
    h.release();
    const codes = await Promise.all([...own, ...others]);
    expect(codes.slice(0, READER_SCANS_PER_CLIENT)).toEqual(Array(READER_SCANS_PER_CLIENT).fill(200));
    expect(codes[READER_SCANS_PER_CLIENT]).toBe(429);
    expect(codes.filter((c) => c === 200)).toHaveLength(READER_SCANS_MAX);
    expect(scansInFlight()).toEqual({ readers: 0, operators: 0 });
  });

  it("while readers hold every reader slot, an operator's scan still runs (up to its own slots)", async () => {
    const h = held();
    const readers = Array.from({ length: READER_SCANS_MAX + 3 }, (_, i) =>
      status(withScanSlot(reader(`198.51.100.${i}`), h.scan)),
    );
    const ops = Array.from({ length: OPERATOR_SCANS_MAX + 1 }, () => status(withScanSlot(operator(), h.scan)));
    await new Promise((r) => setTimeout(r, 20));
    expect(scansInFlight()).toEqual({ readers: READER_SCANS_MAX, operators: OPERATOR_SCANS_MAX });
    h.release();
    const opCodes = await Promise.all(ops);
    expect(opCodes.filter((c) => c === 200)).toHaveLength(OPERATOR_SCANS_MAX);
    expect(opCodes.at(-1)).toBe(429);
    expect((await Promise.all(readers)).filter((c) => c === 429)).toHaveLength(3);
  });
});
