/**
 * `npm run demo:fleet` — the dashboard against a fleet it has never seen: a fixture exporter
 * serving the spec §7 metrics for 20 services × 10 handlers (server/testing/fleet.ts: chosen
 * duplicate ratios, a slow service, a failing one), a Prometheus of its own on a free port scraping
 * it every 2 s with the project's alert rules, and the app (`next dev`, `DEMO=off`) pointed at that
 * Prometheus. Ctrl-C stops all three, each by its pid.
 *
 *   npm run demo:fleet -- [--services 20] [--handlers 10] [--port 3100]
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { buildFleet, startFleetExporter } from "@/server/testing/fleet";
import { startOwnPrometheus } from "@/server/testing/own-prometheus";
import { intArg } from "./lib/args";

const root = fileURLToPath(new URL("..", import.meta.url));
async function main(): Promise<void> {
  const fleet = buildFleet({
    services: intArg("services", 20, 1, 100),
    handlersPerService: intArg("handlers", 10, 1, 50),
  });
  const port = intArg("port", 3100, 1024, 65535);
  const exporter = await startFleetExporter(fleet);
  const prom = await startOwnPrometheus({
    targets: [new URL(exporter.url).host],
    ruleFiles: [`${root}infra/prometheus/rules/dedup.yml`],
    intervalSec: 2,
  });
  console.log(
    `[fleet] exporter ${exporter.url} · ${fleet.services.length} services × ${fleet.handlers.length / fleet.services.length} handlers`,
  );
  console.log(`[fleet] prometheus ${prom.url} (pid ${prom.pid})`);
  const app = spawn(`${root}node_modules/.bin/next`, ["dev", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, DEMO: "off", PROMETHEUS_URL: prom.url, SERVICE_NAME: "svc-01" },
  });
  console.log(`[fleet] app http://127.0.0.1:${port} (pid ${app.pid})`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (app.pid && app.exitCode === null) process.kill(app.pid, "SIGTERM");
    await prom.stop();
    await exporter.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  app.on("exit", () => void stop());
}

main().catch((e: unknown) => {
  console.error(`[fleet] ${(e as Error).message}`);
  process.exit(1);
});
