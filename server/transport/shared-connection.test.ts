import { describe, expect, it } from "vitest";
import { SharedConnection } from "./shared-connection";

describe("SharedConnection", () => {
  it("connects once for callers that ask at the same moment, and again after a failed connect", async () => {
    let connects = 0;
    let fail = true;
    const conn = new SharedConnection(async () => {
      connects++;
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error("broker down");
      return { id: connects };
    });
    const failed = await Promise.allSettled([conn.get(), conn.get()]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(connects).toBe(1);
    fail = false;
    const [a, b] = await Promise.all([conn.get(), conn.get()]);
    expect(a).toBe(b);
    expect(a).toEqual({ id: 2 });
    expect(await conn.get()).toBe(a);
    expect(connects).toBe(2);
  });

  it("take hands over the client and forgets it: the next get connects a new one", async () => {
    let connects = 0;
    const conn = new SharedConnection(async () => ({ id: ++connects }));
    expect(conn.take()).toBeNull();
    const first = await conn.get();
    expect(await conn.take()).toBe(first);
    expect(conn.take()).toBeNull();
    expect(await conn.get()).toEqual({ id: 2 });
  });
});
