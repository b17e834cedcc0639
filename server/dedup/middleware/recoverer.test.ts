import { describe, expect, it } from "vitest";
import { newMessage } from "../message";
import { recoverer } from "./recoverer";

describe("recoverer", () => {
  it.each([
    ["a string", "non-Error thrown: a string"],
    [undefined, "non-Error thrown: undefined"],
    [{ code: 7 }, 'non-Error thrown: {"code":7}'],
  ])("turns a thrown %j into an Error with a stack", async (thrown, message) => {
    const err = await recoverer()(() => Promise.reject(thrown))(newMessage("u", "")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(message);
    expect((err as Error).stack).toContain("Error");
  });

  it("keeps an Error as is and passes results through", async () => {
    const e = new TypeError("t");
    await expect(recoverer()(() => Promise.reject(e))(newMessage("u", ""))).rejects.toBe(e);
    await expect(recoverer()(async () => undefined)(newMessage("u", ""))).resolves.toBeUndefined();
  });
});
