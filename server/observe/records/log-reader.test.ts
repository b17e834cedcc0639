import { describe, expect, it } from "vitest";
import { isTopicMissing, TopicMissingError } from "./log-reader";

describe("isTopicMissing", () => {
  it("knows a missing topic by the error's name, so an error from another bundle's copy of the module counts too", () => {
    expect(isTopicMissing(new TopicMissingError("t"))).toBe(true);
    const fromOtherCopy = Object.assign(new Error("topic t does not exist"), { name: "TopicMissingError" });
    expect(isTopicMissing(fromOtherCopy)).toBe(true);
    expect(isTopicMissing(new Error("topic t does not exist"))).toBe(false);
    expect(isTopicMissing("TopicMissingError")).toBe(false);
  });
});
