import { describe, expect, it } from "vitest";
import { InProgressError } from "../errors";
import { MemoryRepository } from "./memory-repository";
import { runOnce } from "./run-once";

describe("runOnce", () => {
  it("runs once per key that succeeded, runs again after a failure, and reports a run in progress", async () => {
    const repo = new MemoryRepository();
    let runs = 0;
    const ok = async () => void runs++;
    expect(await runOnce(repo, "k", ok)).toBe("ran");
    expect(await runOnce(repo, "k", ok)).toBe("done");
    expect(runs).toBe(1);
    await expect(runOnce(repo, "f", async () => Promise.reject(new Error("publish failed")))).rejects.toThrow(
      "publish failed",
    );
    expect(await runOnce(repo, "f", ok)).toBe("ran");
    await repo.claim("busy", "processing:other", 60_000);
    await expect(runOnce(repo, "busy", ok)).rejects.toBeInstanceOf(InProgressError);
    expect(runs).toBe(2);
  });

  it("fails open when the store cannot be reached: the side effect still runs", async () => {
    const down = Object.assign(new MemoryRepository(), { claim: () => Promise.reject(new Error("ECONNREFUSED")) });
    let runs = 0;
    expect(await runOnce(down, "k", async () => void runs++)).toBe("ran");
    expect(runs).toBe(1);
  });
});
