/**
 * Alertmanager through its API v2 (0.25; the same calls amtool makes): the alerts it holds with
 * their state (active / suppressed, by which silences and inhibitions), the silences, and silence
 * create / expire. Behind `GET /api/alerts` (Alertmanager's state per instance) and `/api/silences`.
 */
import type { AlertInstance, AlertRule } from "@/lib/api/alerts";
import {
  silenceMatchersOf,
  silenceMatches,
  silenceSchema,
  type AlertmanagerInstance,
  type AlertmanagerPart,
  type Silence,
  type SilenceCreate,
  type Suppressor,
} from "@/lib/api/silences";
import { config } from "@/server/config";
import { HttpError } from "@/server/http";
import { failureKind } from "@/server/redact";
import { prometheusEndpoint } from "../metrics/prometheus";
import { NotFoundError, UpstreamUnavailableError, errorText } from "../core/errors";

/** An alert as Alertmanager's `GET /api/v2/alerts` lists it (the fields the app reads). */
export interface AmAlert {
  labels: Record<string, string>;
  fingerprint: string;
  startsAt: string;
  endsAt: string;
  status: { state: "active" | "suppressed" | "unprocessed"; silencedBy: string[]; inhibitedBy: string[] };
}

/** Options of {@link AlertmanagerClient}. */
export interface AlertmanagerOptions {
  /** Time allowed for one HTTP call. 100..30000. @default 2000 */
  timeoutMs: number;
}

/** Defaults of {@link AlertmanagerOptions}. */
export const DEFAULT_ALERTMANAGER_OPTIONS: AlertmanagerOptions = { timeoutMs: 2000 };

/** The few API v2 calls the app makes. Errors: 404 → {@link NotFoundError}, other 4xx → 400/409, else {@link UpstreamUnavailableError}. */
export class AlertmanagerClient {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly opts: AlertmanagerOptions;

  constructor(url: string, opts: Partial<AlertmanagerOptions> = {}) {
    this.opts = { ...DEFAULT_ALERTMANAGER_OPTIONS, ...opts };
    if (!(this.opts.timeoutMs >= 100 && this.opts.timeoutMs <= 30_000))
      throw new RangeError(`timeoutMs: expected 100..30000, got ${this.opts.timeoutMs}`);
    // Same URL form as PROMETHEUS_URL: user:pass@ becomes Authorization: Basic.
    const e = prometheusEndpoint(url);
    this.base = e.base;
    this.headers = e.headers;
  }

  /** Every alert Alertmanager holds that has not resolved, whatever its state. */
  alerts(): Promise<AmAlert[]> {
    return this.call<AmAlert[]>("GET", "/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true");
  }

  /** Every silence Alertmanager keeps (expired ones until its retention drops them), newest end first. */
  async silences(): Promise<Silence[]> {
    const raw = await this.call<Array<Record<string, unknown> & { status?: { state?: string } }>>(
      "GET",
      "/api/v2/silences",
    );
    return raw
      .map((s) => silenceSchema.parse({ ...s, state: s.status?.state }))
      .sort((a, b) => Date.parse(b.endsAt) - Date.parse(a.endsAt) || a.id.localeCompare(b.id));
  }

  /**
   * Creates a silence from now for the duration; returns its id. Its matchers: `{alertname,
   * service[, handler]}` and the instance's other identifying labels ({@link silenceMatchersOf}).
   */
  async createSilence(s: SilenceCreate, now = Date.now()): Promise<string> {
    const body = {
      matchers: silenceMatchersOf(s),
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + s.durationMinutes * 60_000).toISOString(),
      createdBy: s.createdBy ?? "dedup-health",
      comment: s.comment,
    };
    const r = await this.call<{ silenceID: string }>("POST", "/api/v2/silences", body);
    return r.silenceID;
  }

  /** Expires silence `id` now (Alertmanager keeps it, as expired, for its retention). */
  async expireSilence(id: string): Promise<void> {
    await this.call<unknown>("DELETE", `/api/v2/silence/${encodeURIComponent(id)}`);
  }

  /** The silence `id` as Alertmanager lists it now. */
  async silence(id: string): Promise<Silence> {
    const s = await this.call<Record<string, unknown> & { status?: { state?: string } }>(
      "GET",
      `/api/v2/silence/${encodeURIComponent(id)}`,
    );
    return silenceSchema.parse({ ...s, state: s.status?.state });
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        cache: "no-store",
        headers: { ...this.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (e) {
      throw new UpstreamUnavailableError(`alertmanager: unreachable (${failureKind(e)})`);
    }
    const text = await res.text().catch(() => "");
    if (res.status === 404)
      throw new NotFoundError(`alertmanager: ${text.trim().replace(/^"|"$/g, "") || "not found"}`);
    if (res.status >= 400 && res.status < 500)
      throw new HttpError(
        res.status === 409 ? 409 : 400,
        res.status === 409 ? "conflict" : "bad_request",
        `alertmanager refused: ${text.trim().slice(0, 300)}`,
      );
    if (!res.ok)
      throw new UpstreamUnavailableError(
        `alertmanager: ${path.split("?")[0]} answered HTTP ${res.status}: ${text.trim().slice(0, 200)}`,
      );
    if (text.trim() === "") return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new UpstreamUnavailableError(`alertmanager: ${path.split("?")[0]} answered without JSON`);
    }
  }
}

type G = typeof globalThis & { __dedupHealthAlertmanager?: { url: string; client: AlertmanagerClient } };

/** The process's client over `ALERTMANAGER_URL` (kept on `globalThis`); `null` when not configured. */
export function alertmanagerClient(): AlertmanagerClient | null {
  const url = config().ALERTMANAGER_URL;
  if (!url) return null;
  const g = globalThis as G;
  if (g.__dedupHealthAlertmanager?.url !== url)
    g.__dedupHealthAlertmanager = { url, client: new AlertmanagerClient(url) };
  return g.__dedupHealthAlertmanager.client;
}

/** Why there is no Alertmanager answer when none is configured. */
export const NOT_CONFIGURED =
  "ALERTMANAGER_URL is not set: alert states are Prometheus' alone, and silences cannot be listed or created";

/** The configured client, or 503 naming the variable to set. */
export function requireClient(): AlertmanagerClient {
  const c = alertmanagerClient();
  if (!c) throw new UpstreamUnavailableError(`alertmanager: not configured (${NOT_CONFIGURED})`);
  return c;
}

/** `alertname{a="1", b="2"}`, for an inhibiting alert. */
function alertText(labels: Record<string, string>): string {
  const { alertname, ...rest } = labels;
  const inner = Object.entries(rest)
    .filter(([k]) => k !== "severity")
    .map(([k, v]) => `${k}="${v}"`)
    .join(", ");
  return `${alertname ?? "?"}{${inner}}`;
}

/** Whether Alertmanager's alert is this Prometheus instance: same alert name, and every label of the instance equal. */
function sameAlert(am: AmAlert, inst: AlertInstance): boolean {
  if (am.labels.alertname !== inst.alert) return false;
  return Object.entries(inst.labels).every(([k, v]) => am.labels[k] === v);
}

/**
 * Alertmanager's view of one Prometheus alert instance, from what it lists (pure): its state and
 * what suppresses it (silences with their end, inhibiting alerts by their labels).
 */
export function instanceView(
  inst: AlertInstance,
  alerts: readonly AmAlert[],
  silences: readonly Silence[],
): AlertmanagerInstance {
  const byId = new Map(silences.map((s) => [s.id, s]));
  const fromSilence = (s: Silence): Suppressor => ({ kind: "silence", id: s.id, text: s.comment, until: s.endsAt });
  const am = alerts.find((a) => sameAlert(a, inst));
  let suppressedBy: Suppressor[];
  if (am) {
    suppressedBy = [
      ...am.status.silencedBy.map((id) => {
        const s = byId.get(id);
        return s ? fromSilence(s) : { kind: "silence" as const, id, text: "", until: null };
      }),
      ...am.status.inhibitedBy.map((fp) => {
        const src = alerts.find((a) => a.fingerprint === fp);
        return { kind: "inhibition" as const, id: fp, text: src ? alertText(src.labels) : fp, until: null };
      }),
    ];
  } else {
    // Not sent (yet): the silences that will mute it once it fires.
    const labels = { alertname: inst.alert, severity: inst.severity, ...inst.labels };
    suppressedBy = silences.filter((s) => s.state === "active" && silenceMatches(s, labels)).map(fromSilence);
  }
  const ends = suppressedBy.map((s) => s.until).filter((u): u is string => u !== null);
  return {
    state: am ? am.status.state : "not-received",
    suppressedBy,
    until: ends.length ? ends.reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b)) : null,
  };
}

/**
 * When a firing instance fired: Alertmanager's `startsAt` when it is earlier than Prometheus' own
 * (a restarted Prometheus begins the hold again, "firing since 25 s ago", while Alertmanager, sent
 * the alert all along, keeps when it started: 11 min earlier); else Prometheus'.
 */
export function firingSinceOf(inst: AlertInstance, alerts: readonly AmAlert[]): string | null {
  if (inst.state !== "firing") return inst.firingSince;
  const am = alerts.find((a) => sameAlert(a, inst));
  const ams = am ? Date.parse(am.startsAt) : NaN;
  if (!Number.isFinite(ams) || ams <= 0) return inst.firingSince;
  return inst.firingSince === null || ams < Date.parse(inst.firingSince)
    ? new Date(ams).toISOString()
    : inst.firingSince;
}

/**
 * Adds Alertmanager's view to every instance of `rules` and returns Alertmanager's part of the
 * answer. Never throws: Alertmanager down or not configured leaves the instances as they are.
 */
export async function withAlertmanager(rules: AlertRule[]): Promise<{ rules: AlertRule[]; part: AlertmanagerPart }> {
  const client = alertmanagerClient();
  if (!client) return { rules, part: { status: "not-configured", detail: NOT_CONFIGURED } };
  try {
    const [alerts, silences] = await Promise.all([client.alerts(), client.silences()]);
    const out = rules.map((r) => ({
      ...r,
      instances: r.instances.map((i) => ({
        ...i,
        firingSince: firingSinceOf(i, alerts),
        alertmanager: instanceView(i, alerts, silences),
      })),
    }));
    // The silences in force or scheduled: Alertmanager keeps expired ones for days (1,000 of them
    // made every poll of /api/alerts grow from 8.6 kB to 1.26 MB); they suppress nothing.
    return { rules: out, part: { status: "ok", silences: silences.filter((s) => s.state !== "expired") } };
  } catch (e) {
    return { rules, part: { status: "unavailable", detail: errorText(e) } };
  }
}
