/** The clauses on what the handler's Redis keys hold: the claim, the done value, its TTL and fingerprint, release and retry. */
import { payloadFingerprint } from "@/server/dedup";
import { HANDLER_INFO_LABEL } from "@/names/contract";
import { TTL_POLICY } from "@/names/keys";
import type { Evidence } from "./evidence";
import { broken, donePattern, firstWrite, held, info, unknown, type Verdict } from "./judging";

/** The lease of a `SET … PX <ms>` / `EX <s>` in milliseconds, as text. */
function leaseOf(args: readonly string[]): string {
  const i = args.findIndex((a, j) => j >= 3 && (a.toUpperCase() === "PX" || a.toUpperCase() === "EX"));
  if (i < 0) return "none";
  return args[i]!.toUpperCase() === "PX" ? String(args[i + 1]) : String(Number(args[i + 1]) * 1000);
}

/** The `claim-before-handler` clause. */
export function judgeClaim(e: Evidence): Verdict {
  if (e.commands.length === 0)
    return unknown(
      "MONITOR saw no command on the handler's keys (another Redis than the consumer's, or MONITOR not allowed)",
    );
  const bad: string[] = [];
  for (const f of e.fresh) {
    const w = firstWrite(e, `${e.prefix}:${f.uuid}`);
    if (!w) return unknown(`MONITOR saw no write to ${e.prefix}:${f.uuid}`);
    const [cmd, , value = ""] = w.args;
    const opts = w.args.slice(3).map((a) => a.toUpperCase());
    if (
      cmd !== "SET" ||
      !value.startsWith("processing:") ||
      !opts.includes("NX") ||
      !(opts.includes("PX") || opts.includes("EX"))
    )
      bad.push(w.args.map((a) => JSON.stringify(a)).join(" "));
  }
  if (bad.length)
    return broken(
      `first write to a fresh key was ${bad[0]} — not SET processing:<token> NX PX <lease>: the key is marked before the handler ran, so a failed run loses the message`,
    );
  const lease = info(e)?.labels[HANDLER_INFO_LABEL.leaseMs];
  const pxs = new Set(e.fresh.map((f) => leaseOf(firstWrite(e, `${e.prefix}:${f.uuid}`)!.args)));
  if (lease && [...pxs].some((px) => px !== lease))
    return broken(`claimed for PX ${[...pxs].join(", ")} ms, but dedup_handler_info declares lease_ms ${lease}`);
  return held(
    `each fresh key was first claimed with SET processing:<token> NX PX ${[...pxs].join(", ")} (${e.fresh.length} keys)`,
  );
}

/** The `done-with-position` clause. */
export function judgeDone(e: Evidence): Verdict {
  const bad = e.fresh.filter((f) => !donePattern(e, f).test(e.freshKeys.get(f.uuid)?.value ?? ""));
  if (bad.length === 0)
    return held(
      `done:<topic>:<partition>:<offset> of the first delivery on ${e.fresh.length} keys, copies did not change it`,
    );
  const f = bad[0]!;
  return broken(
    `${e.prefix}:${f.uuid} holds ${JSON.stringify(e.freshKeys.get(f.uuid)?.value)}, expected done:${e.o.topic}:${f.partition}:${f.offset}[#<fingerprint>]`,
  );
}

/** The `done-ttl` clause. */
export function judgeTtl(e: Evidence): Verdict {
  const ttl = Number(info(e)?.labels[HANDLER_INFO_LABEL.ttlMs] ?? NaN);
  const elapsed = Date.now() - e.startedAt + 5_000;
  const pttls = e.fresh.map((f) => e.freshKeys.get(f.uuid)?.pttl ?? -2);
  const lo = Number.isFinite(ttl) ? ttl - elapsed : TTL_POLICY.minimumMs;
  const hi = Number.isFinite(ttl) ? ttl : Infinity;
  const bad = pttls.find((p) => p <= 0 || p < lo || p > hi);
  const against = Number.isFinite(ttl)
    ? `the declared ttl_ms ${ttl}`
    : `the contract's minimum ${TTL_POLICY.minimumMs} ms (no ttl_ms declared)`;
  return bad === undefined
    ? held(`done keys expire in ${Math.min(...pttls)}–${Math.max(...pttls)} ms, within ${against}`)
    : broken(`a done key's PTTL is ${bad} ms, against ${against}`);
}

/** The `payload-fingerprint` clause. */
export function judgeFingerprint(e: Evidence): Verdict {
  const withFp = e.fresh.filter((f) => /#[A-Za-z0-9_-]{7}$/.test(e.freshKeys.get(f.uuid)?.value ?? ""));
  if (withFp.length === 0)
    return unknown(
      "the done values carry no #<fingerprint>: a reused UUID with another payload cannot be told from a repeat",
    );
  const bad = withFp.find((f) => !e.freshKeys.get(f.uuid)!.value!.endsWith(`#${payloadFingerprint(f.payload)}`));
  return bad
    ? broken(
        `${e.freshKeys.get(bad.uuid)!.value} does not end in #${payloadFingerprint(bad.payload)} (SHA-256, base64url, first 7 characters)`,
      )
    : held(`#<fingerprint> follows the algorithm on ${withFp.length} keys`);
}

/** The `release-on-failure` clause. */
export function judgeRelease(e: Evidence): Verdict {
  const v = e.poisonKey.value;
  if (v === null) return held("the failed record's key was deleted: a redelivery or a re-publish runs the handler");
  const cost = v.startsWith("processing:")
    ? "every copy of this message waits as in progress until the lease expires"
    : "a retry of this message is swallowed and the message is lost";
  return broken(`after the handler failed, ${e.prefix}:${e.poison.uuid} still holds ${JSON.stringify(v)}: ${cost}`);
}

/** The `failure-then-success` clause. */
export function judgeRetry(e: Evidence): Verdict {
  const v = e.retryKey.value ?? "";
  return donePattern(e, e.retry).test(v)
    ? held(`the UUID sent again after its failure ran and was marked ${v}`)
    : broken(
        `the UUID sent again after its failure was not processed: its key holds ${JSON.stringify(e.retryKey.value)}`,
      );
}
