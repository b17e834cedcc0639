/** What every clause's judge shares: the verdict types and helpers over a run's evidence. */
import { HANDLER_INFO_METRIC } from "@/names/contract";
import type { Evidence } from "./evidence";
import type { Scrape } from "./exposition";
import type { Sent } from "./drive";

/** How a run judged a clause. */
export type ClauseStatus = "held" | "broken" | "not measured";

/** A clause's verdict and why. */
export interface Verdict {
  status: ClauseStatus;
  detail: string;
}

/** One clause of the contract. */
export interface Clause {
  name: string;
  says: string;
  judge(e: Evidence): Verdict;
}

/** The clause held, and what showed it. */
export const held = (detail: string): Verdict => ({ status: "held", detail });
/** The clause broke, and how. */
export const broken = (detail: string): Verdict => ({ status: "broken", detail });
/** The run could not tell: the signal the clause needs is missing (never a pass). */
export const unknown = (detail: string): Verdict => ({ status: "not measured", detail });

/** `done:<topic>:<partition>:<offset>` of a record, with `#<fingerprint>` allowed after it. */
export function donePattern(e: Evidence, s: Sent): RegExp {
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^done:${esc(e.o.topic)}:${s.partition}:${s.offset}(#[A-Za-z0-9_-]{7})?$`);
}

/** The handler's labels. */
export const who = (e: Evidence) => ({ service: e.o.service, handler: e.o.handler });
/** How far a counter moved between two scrapes. */
export const delta = (a: Scrape, b: Scrape, name: string, m: Record<string, string>) =>
  (b.sum(name, m) ?? 0) - (a.sum(name, m) ?? 0);
/** The handler's dedup_handler_info series, from the last scrape. */
export const info = (e: Evidence) => e.scrapes.final.series(HANDLER_INFO_METRIC, who(e))[0];
const WRITES = new Set(["SET", "SETNX", "SETEX", "PSETEX", "GETSET", "GETDEL", "DEL", "UNLINK"]);

/** The first command that wrote `key`, as MONITOR saw it. */
export function firstWrite(e: Evidence, key: string) {
  return e.commands.find((c) => WRITES.has(c.args[0]!) && c.args[1] === key);
}
