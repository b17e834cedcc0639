import { describe, expect, it } from "vitest";
import { overviewHandlerSchema } from "@/lib/api/overview";
import { windowBeforeStart } from "./overview";

describe("the overview says when its 5-min window reaches before this app's start", () => {
  const now = Date.parse("2026-12-07T11:15:22Z");
  it("a process up 40 s names its start and the window it is younger than", () => {
    expect(windowBeforeStart(now, 40)).toEqual({ appStartedAt: "2026-12-07T11:14:42.000Z", windowSeconds: 300 });
  });
  it("a process older than the window adds nothing", () => {
    expect(windowBeforeStart(now, 300)).toBeNull();
    expect(windowBeforeStart(now, 3600)).toBeNull();
  });
  it("the row's shape carries it", () => {
    const f = overviewHandlerSchema.shape.beforeStart;
    expect(f.parse(windowBeforeStart(now, 40))).toEqual(windowBeforeStart(now, 40));
  });
});
