import { describe, expect, it } from "vitest";
import { correlationId } from "./correlation-id";
import { newMessage } from "../message";
import { CORRELATION_ID_KEY } from "../../../names/dedup";

describe("correlationId", () => {
  it("keeps an existing id and copies it onto produced messages that lack one", async () => {
    const out = await correlationId()(async () => [
      newMessage("a", ""),
      newMessage("b", "", { metadata: { [CORRELATION_ID_KEY]: "own" } }),
    ])(newMessage("in", "", { metadata: { [CORRELATION_ID_KEY]: "req-1" } }));
    expect(out?.map((m) => m.metadata[CORRELATION_ID_KEY])).toEqual(["req-1", "own"]);
  });

  it("generates one when absent, visible to the handler and its products", async () => {
    const msg = newMessage("in", "");
    let seen: string | undefined;
    const out = await correlationId()(async (m) => {
      seen = m.metadata[CORRELATION_ID_KEY];
      return [newMessage("a", "")];
    })(msg);
    expect(seen).toMatch(/^[0-9a-f-]{36}$/);
    expect(out?.[0]?.metadata[CORRELATION_ID_KEY]).toBe(seen);
  });
});
