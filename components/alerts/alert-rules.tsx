"use client";

import type { AlertRule, AlertsUnknown } from "@/lib/api/alerts";
import { formatByUnit, formatRate } from "@/lib/format";
import { ALERT_NAMES } from "@/lib/thresholds";
import { AlertBadge } from "./alert-badge";
import { SilenceForm } from "./silence-form";
import { AlertmanagerState } from "./silences";
import { formatInstant } from "@/lib/clock-time";

/** A rule's transition times over its instances, for the rule's own badge. */
export interface RuleTimes {
  /** Earliest pending start over the instances in the rule's (worst) state. */
  since: string | null;
  /** Earliest firing start over the firing instances. */
  firingSince: string | null;
  /** While the rule is pending: the soonest instance's firing time. */
  firesAt: string | null;
}

function earliest(xs: ReadonlyArray<string | null>): string | null {
  return xs.filter((x): x is string => !!x).sort((a, b) => Date.parse(a) - Date.parse(b))[0] ?? null;
}

/** "Since when" for a rule: from its instances in its worst state (firing since, or pending since and fires at). */
export function ruleTimes(rule: AlertRule): RuleTimes {
  const mine = rule.instances.filter((i) => i.state === rule.state && rule.state !== "inactive");
  return {
    since: earliest(mine.map((i) => i.activeAt)),
    firingSince: earliest(mine.map((i) => i.firingSince)),
    firesAt: earliest(mine.map((i) => i.firesAt)),
  };
}

/** Local clock time of an ISO instant, seconds shown (transitions are seconds apart). */
function clock(iso: string | null): string {
  return formatInstant(iso);
}

/** What a per-second rule counts: errors unless it says otherwise (the lag's slope is messages/s). */
const RATE_NOUN: Readonly<Record<string, string>> = {
  [ALERT_NAMES.consumerLagGrowing]: "messages",
  [ALERT_NAMES.leaseLost]: "runs",
};

/** The rule's threshold in its unit (a rate in what the rule counts per second). */
function thresholdValue(rule: AlertRule): string {
  return rule.unit === "per_second"
    ? formatRate(rule.threshold, RATE_NOUN[rule.alert] ?? "errors")
    : formatByUnit(rule.threshold, rule.unit);
}

/** "> threshold for duration" as a card states the rule; a rule without a hold fires "at once", not "for 0m". */
export function threshold(rule: Pick<AlertRule, "alert" | "unit" | "threshold" | "for">): string {
  return `> ${thresholdValue(rule as AlertRule)} ${/^0[smh]?$/.test(rule.for) ? "at once" : `for ${rule.for}`}`;
}

/** Compact cards, one per alert rule: state, since, threshold. Used on the overview. */
export function AlertCards({
  rules,
  unknown,
}: {
  rules: readonly AlertRule[];
  /** The states cannot be read now: `rules` are the last known. */ unknown?: AlertsUnknown | null;
}) {
  return (
    <ul className="grid gap-3 sm:grid-cols-3" aria-label="Alert rules">
      {rules.map((r) => (
        <li
          key={r.alert}
          data-testid={`alert-${r.alert}`}
          className="rounded-lg border border-slate-200 bg-white p-3 dark:border-slate-800 dark:bg-slate-900"
        >
          <div className="flex flex-wrap items-center justify-between gap-2">
            {/* The full name, wrapped at 390 px rather than cut ("DedupDuplicateR…"). */}
            <span className="min-w-0 break-words text-sm font-semibold [overflow-wrap:anywhere]" title={r.alert}>
              {r.alert}
            </span>
            <AlertBadge state={r.state} {...ruleTimes(r)} unknown={unknown} />
          </div>
          <p className="mt-1 text-xs text-slate-600 dark:text-slate-300">{r.title}</p>
          <p className="text-xs text-slate-500 dark:text-slate-400">
            Threshold {threshold(r)} · {r.instances.filter((i) => i.state !== "inactive").length} of{" "}
            {r.instances.length} instances active
          </p>
        </li>
      ))}
    </ul>
  );
}

/** Props of the alert rows: the clock for "since" badges, whether the states are last known, Alertmanager shown. */
interface RuleViewProps {
  now: number;
  /** The states cannot be read now: the rules are the last known. */
  unknown?: AlertsUnknown | null;
  alertmanager?: boolean;
}

/** An instance's labels that tell it from its rule's others, as `k="v", …`. */
function instanceLabels(labels: Record<string, string>): string {
  return Object.entries(labels)
    .filter(([k]) => k !== "alertname" && k !== "severity")
    .map(([k, v]) => `${k}="${v}"`)
    .join(", ");
}

/** One instance of a rule: labels, state, value, transition times and, with Alertmanager, its state there and a silence button. */
function InstanceRow({
  rule,
  i,
  now,
  unknown,
  alertmanager,
}: RuleViewProps & { rule: AlertRule; i: AlertRule["instances"][number] }) {
  return (
    <tr
      data-testid="alert-instance"
      data-labels={JSON.stringify(i.labels)}
      className="border-t border-slate-100 align-top dark:border-slate-800"
    >
      <td className="py-1 font-mono text-xs">
        {instanceLabels(i.labels)}
        {i.summary && i.summary !== rule.title ? (
          <div className="font-sans text-slate-500 dark:text-slate-400">{i.summary}</div>
        ) : null}
      </td>
      <td>
        <AlertBadge
          state={i.state}
          since={i.activeAt}
          firingSince={i.firingSince}
          firesAt={i.firesAt}
          now={now}
          unknown={unknown}
        />
      </td>
      <td className="whitespace-nowrap pl-3 text-right tabular-nums">
        {i.value === null ? "—" : formatByUnit(i.value, rule.unit)}
      </td>
      <td className="whitespace-nowrap pl-3 text-right tabular-nums" title={i.activeAt ?? undefined}>
        {clock(i.activeAt)}
      </td>
      <td className="whitespace-nowrap pl-3 text-right tabular-nums" title={i.firingSince ?? i.firesAt ?? undefined}>
        {i.firingSince ? clock(i.firingSince) : i.firesAt ? `not yet (due ${clock(i.firesAt)})` : "—"}
      </td>
      {alertmanager ? (
        <td className="pl-3">
          <AlertmanagerState am={i.alertmanager} />
          {i.labels.service && i.alertmanager?.state !== "suppressed" ? (
            <SilenceForm
              alertname={rule.alert}
              service={i.labels.service}
              {...(i.labels.handler ? { handler: i.labels.handler } : {})}
              labels={i.labels}
              label="Silence…"
              testId="silence-open"
            />
          ) : null}
        </td>
      ) : null}
    </tr>
  );
}

/** The instances of one rule as a table, or a note that its expression returns no series. */
function InstanceTable(props: RuleViewProps & { rule: AlertRule }) {
  const { rule: r, alertmanager } = props;
  if (r.instances.length === 0)
    return (
      <p className="mt-2 text-sm text-slate-500 dark:text-slate-400">
        No instance: the expression returns no series (no traffic, or never above the threshold).
      </p>
    );
  return (
    // At 390 px the columns scroll inside this box (the page itself never grows wider than the screen).
    <div className="mt-2 overflow-x-auto" data-testid="alert-instances">
      <table className="w-full min-w-[36rem] text-sm">
        <caption className="sr-only">Instances of {r.alert}</caption>
        <thead className="text-left text-xs text-slate-500 dark:text-slate-400">
          <tr>
            <th scope="col" className="py-1 font-normal">
              Labels
            </th>
            <th scope="col" className="font-normal">
              State
            </th>
            <th scope="col" className="text-right font-normal">
              Value
            </th>
            <th scope="col" className="text-right font-normal">
              Pending since
            </th>
            <th scope="col" className="text-right font-normal">
              Firing since
            </th>
            {alertmanager ? (
              <th scope="col" className="pl-3 font-normal">
                Alertmanager
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {r.instances.map((i, n) => (
            <InstanceRow key={n} {...props} i={i} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One rule: name, state, runbook link, title, when it fires, its expression and its instances. */
function RuleSection(props: RuleViewProps & { rule: AlertRule }) {
  const { rule: r, now, unknown } = props;
  return (
    <section
      data-testid={`rule-${r.alert}`}
      aria-labelledby={`rule-${r.alert}-h`}
      className="rounded-lg border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900"
    >
      <header className="flex flex-wrap items-center gap-3">
        <h2 id={`rule-${r.alert}-h`} className="text-base font-semibold">
          {r.alert}
        </h2>
        <AlertBadge state={r.state} {...ruleTimes(r)} now={now} unknown={unknown} />
        <a
          href={r.runbookUrl}
          data-testid="rule-runbook"
          className="ml-auto text-sm text-blue-700 underline hover:no-underline dark:text-blue-300"
          target="_blank"
          rel="noreferrer"
        >
          Runbook
        </a>
      </header>
      <p className="mt-1 text-sm text-slate-600 dark:text-slate-300">{r.title}</p>
      <p className="mt-1 text-xs text-slate-500 dark:text-slate-400">
        Fires when the value is above {thresholdValue(r)} for {r.for}
        {r.evaluationIntervalMs > 0
          ? `, at the first evaluation (every ${r.evaluationIntervalMs / 1000} s) at least ${r.for} after it went pending`
          : ""}
        .
      </p>
      <pre className="mt-2 overflow-x-auto rounded bg-slate-100 p-2 text-xs dark:bg-slate-800">
        <code>{r.expr}</code>
      </pre>
      <InstanceTable {...props} />
    </section>
  );
}

/**
 * Full table of every rule and instance, with expression, value and runbook. Used on /alerts.
 * With `alertmanager`, each instance also shows Alertmanager's state and a silence button.
 */
export function AlertTable({
  rules,
  now,
  unknown,
  alertmanager = false,
}: RuleViewProps & { rules: readonly AlertRule[] }) {
  return (
    <div className="space-y-4">
      {rules.map((r) => (
        <RuleSection key={r.alert} rule={r} now={now} unknown={unknown} alertmanager={alertmanager} />
      ))}
    </div>
  );
}
