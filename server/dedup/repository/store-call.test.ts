import { describe, expect, it } from "vitest";
import { classifyStoreError, StoreTimeoutError, StoreUnavailableError, timed } from "./store-call";

const never = () => new Promise<never>(() => undefined);
const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6390"), { code: "ECONNREFUSED" });

describe("store call classification: by what happened, not by elapsed time", () => {
  it("a timeout while the connection was lost is redis_conn; on a ready connection it is redis_timeout", async () => {
    const lost = await timed(never(), 5, { connectionLostSince: () => true }).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(StoreUnavailableError);
    expect(classifyStoreError(lost)).toBe("redis_conn");
    const slow = await timed(never(), 5, { connectionLostSince: () => false }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(StoreTimeoutError);
    expect(classifyStoreError(slow)).toBe("redis_timeout");
  });

  it("a client's own command timeout on a connection that dropped is redis_conn", async () => {
    const e = await timed(Promise.reject(new Error("Command timed out")), 1_000, {
      connectionLostSince: () => true,
    }).catch((x: unknown) => x);
    expect(classifyStoreError(e)).toBe("redis_conn");
  });

  it("refused, reset and closed connections are redis_conn by their code or message", () => {
    expect(classifyStoreError(refused())).toBe("redis_conn");
    expect(classifyStoreError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe("redis_conn");
    expect(classifyStoreError(new Error("Connection is closed."))).toBe("redis_conn");
    expect(classifyStoreError(new Error("Reached the max retries per request limit (which is 1)."))).toBe("redis_conn");
  });
});
