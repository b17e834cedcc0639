/**
 * The embedded mode's exposition, marked as such: every sample of the app's `/api/metrics` gains
 * `app_mode="embedded"` (names/observe.ts `EMBEDDED_SERIES_LABEL`). The demo's counters carry the real
 * service's names; unmarked, a Prometheus scraping the app's port could not tell a demo from the
 * service, and real mode started after it would open with the demo's faults as current alerts.
 */
import { EMBEDDED_SERIES_LABEL } from "@/names/observe";

/** `name{a="b"} 1` → `name{app_mode="embedded",a="b"} 1`, `name 1` → `name{app_mode="embedded"} 1`; comments unchanged. */
export function markEmbedded(exposition: string): string {
  const pair = `${EMBEDDED_SERIES_LABEL.name}="${EMBEDDED_SERIES_LABEL.value}"`;
  const named = new RegExp(`[{,]${EMBEDDED_SERIES_LABEL.name}="`);
  return exposition
    .split("\n")
    .map((line) => {
      if (line === "" || line.startsWith("#")) return line;
      const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
      // A series that already names the label keeps it (a label may appear once).
      if (!m || named.test(line)) return line;
      const rest = line.slice(m[0].length);
      if (rest.startsWith("{}")) return `${m[0]}{${pair}}${rest.slice(2)}`;
      return rest.startsWith("{") ? `${m[0]}{${pair},${rest.slice(1)}` : `${m[0]}{${pair}}${rest}`;
    })
    .join("\n");
}
