import { describe } from "vitest";
import { MemoryRepository } from "../repository/memory-repository";
import { producedMessagesSuite } from "./produced-messages.suite";

describe("produced messages on the in-memory repository", () => {
  let n = 0;
  producedMessagesSuite(() => ({ repository: new MemoryRepository(), service: `prod${n++}` }));
});
