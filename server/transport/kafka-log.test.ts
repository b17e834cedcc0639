import { logLevel } from "kafkajs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { kafkaLogCreator } from "./kafka-log";

/** Lines a client at `clientLevel` prints for one kafkajs log entry, by console method. */
function printed(
  clientLevel: logLevel,
  entry: { namespace: string; level: logLevel; message: string; error?: string },
) {
  const out: string[] = [];
  for (const m of ["error", "warn", "log"] as const)
    vi.spyOn(console, m).mockImplementation((line: string) => void out.push(`${m}: ${line}`));
  kafkaLogCreator(clientLevel)({
    namespace: entry.namespace,
    level: entry.level,
    label: "",
    log: { timestamp: "", message: entry.message, error: entry.error },
  });
  return out;
}

afterEach(() => vi.restoreAllMocks());

describe("kafkajs log lines", () => {
  // As kafkajs 2.2 logs them: the heartbeat's REBALANCE_IN_PROGRESS at ERROR, the runner's re-join at WARN.
  const heartbeat = {
    namespace: "Connection",
    level: logLevel.ERROR,
    message: "Response Heartbeat(key: 12, version: 3)",
    error: "The group is rebalancing, so a rejoin is needed",
  };
  const rejoin = { namespace: "Runner", level: logLevel.WARN, message: "The group is rebalancing, re-joining" };

  it("a rebalance's routine chatter is not printed at the default WARN level", () => {
    expect(printed(logLevel.WARN, heartbeat)).toEqual([]);
    expect(printed(logLevel.WARN, rejoin)).toEqual([]);
  });

  it("it is printed as info when the client logs INFO", () => {
    expect(printed(logLevel.INFO, heartbeat)).toEqual([
      "log: [kafka Connection] Response Heartbeat(key: 12, version: 3): The group is rebalancing, so a rejoin is needed",
    ]);
  });

  it("real errors stay errors", () => {
    expect(
      printed(logLevel.WARN, {
        namespace: "Connection",
        level: logLevel.ERROR,
        message: "Connection error",
        error: "connect ECONNREFUSED 127.0.0.1:9092",
      }),
    ).toEqual(["error: [kafka Connection] Connection error: connect ECONNREFUSED 127.0.0.1:9092"]);
  });
});
