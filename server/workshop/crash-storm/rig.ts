/**
 * One guarantee as the crash storm drives it: how it is set up, whether it can run where the
 * workshop runs (PostgreSQL reachable, real Kafka), its storm replicas, and where its side effects
 * are counted — by their recipient, never by the consumer that performed them.
 */
import type { Guarantee } from "@/lib/api/workshop";
import type { ScenarioContext } from "../scenario-context";
import type { StormTarget } from "./storm";
import type { StormReads } from "./storm-reads";

/** A guarantee ready for the storm, with its own topics, group, tables and key prefix. */
export interface GuaranteeRig extends StormTarget {
  /** Side effects per event UUID as their recipient counts them, and who counted them. */
  count(): Promise<{ counts: Map<string, number>; countedBy: string }>;
  /** Deletes what it made (topics, group, tables; the run deletes its keys). */
  cleanup(): Promise<void>;
}

/** A guarantee the scenario compares. */
export interface GuaranteeSpec {
  guarantee: Guarantee;
  /** The setup, one line (shown whether it runs or not). */
  setup(ctx: ScenarioContext): string;
  /** Makes its rig, or resolves why it cannot run here ("no PostgreSQL configured: …"). */
  open(ctx: ScenarioContext, reads: StormReads): Promise<GuaranteeRig | { notRun: string }>;
}

/** The UUID of the event an output record answers: outputs are `out-<event uuid>`. */
export const outputUuid = (event: string) => `out-${event}`;

/** Counts each event's outputs among `uuids` (output UUIDs `out-<event uuid>`). */
export function countOutputs(uuids: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const u of uuids) {
    const event = u.startsWith("out-") ? u.slice(4) : u;
    counts.set(event, (counts.get(event) ?? 0) + 1);
  }
  return counts;
}
