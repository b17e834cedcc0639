import { describe, expect, it } from "vitest";
import { runButtonBusy } from "./use-workshop-run";

const idle = { starting: false, shownRun: null, shownStatus: undefined, startedHere: null, listRunning: null };

describe("the workshop's Run button", () => {
  it("stays 'Running…' between the start's answer and the run's own first answer (it was an enabled 'Run scenario' for 5 s)", () => {
    expect(runButtonBusy({ ...idle, shownRun: "r1", startedHere: "r1" })).toBe(true);
    expect(runButtonBusy({ ...idle, shownRun: "r1", listRunning: "r1" })).toBe(true);
    expect(runButtonBusy({ ...idle, starting: true })).toBe(true);
  });

  it("is free once the run's own answer says it ended, whatever a stale list says; busy while another run of it runs", () => {
    expect(runButtonBusy({ ...idle, shownRun: "r1", startedHere: "r1", shownStatus: "done", listRunning: "r1" })).toBe(
      false,
    );
    expect(runButtonBusy({ ...idle, shownRun: "r0", shownStatus: "done" })).toBe(false);
    expect(runButtonBusy({ ...idle, shownRun: "r0", shownStatus: "done", listRunning: "r2" })).toBe(true);
    // An old run shown from the URL, not started here and not running by the list: not busy while it loads.
    expect(runButtonBusy({ ...idle, shownRun: "r0" })).toBe(false);
  });
});
