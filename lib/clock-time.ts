/**
 * One way to write an instant on every page: the local 24-hour clock with seconds ("10:59:09"), the
 * day before it when it is not today ("Dec 6 10:59:09") — never "10:59:09 AM" on one panel, "10:58:23"
 * on the next and "2026-12-07T11:06:15.129Z" on a third.
 */

/** "10:59:09" today, "Dec 6 10:59:09" another day (local time); "—" without a valid instant. */
export function formatInstant(iso: string | number | null | undefined, now: number = Date.now()): string {
  if (iso === null || iso === undefined) return "—";
  const t = typeof iso === "number" ? iso : Date.parse(iso);
  if (!Number.isFinite(t)) return "—";
  const d = new Date(t);
  const clock = [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
  const today = new Date(now);
  const sameDay =
    d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  if (sameDay) return clock;
  const month = d.toLocaleString("en-US", { month: "short" });
  return `${month} ${d.getDate()}${d.getFullYear() === today.getFullYear() ? "" : ` ${d.getFullYear()}`} ${clock}`;
}
