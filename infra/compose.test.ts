import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(__dirname, "..");

interface Service {
  image?: string;
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  build?: { context: string; dockerfile: string };
  ports?: string[];
  volumes?: string[];
  network_mode?: string;
  environment?: Record<string, string>;
  command?: string[];
}

// Merge keys (`<<: *app`), as docker compose reads them.
const compose = parse(readFileSync(join(root, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const APPS = ["app-1", "app-2"] as const;
const dockerfile = readFileSync(join(root, "infra/app.Dockerfile"), "utf8");

/** The Dockerfile's stages: `FROM … AS name` and the instructions under it. */
function stages(text: string): Array<{ name: string; from: string; lines: string[] }> {
  const out: Array<{ name: string; from: string; lines: string[] }> = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (m) out.push({ from: m[1]!, name: m[2] ?? String(out.length), lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

describe("docker-compose.yml (no Docker engine here: checked by parsing)", () => {
  it("runs Redis 7, Kafka 3.9 in KRaft mode, PostgreSQL, Prometheus, Alertmanager, two app replicas and their load balancer", () => {
    const s = compose.services;
    expect(Object.keys(s).sort()).toEqual([
      "alertmanager",
      "app-1",
      "app-2",
      "kafka",
      "lb",
      "postgres",
      "prometheus",
      "redis",
    ]);
    expect(s.alertmanager?.image).toMatch(/^prom\/alertmanager:v0\./);
    expect(s.redis?.image).toMatch(/^redis:7/);
    expect(s.kafka?.image).toMatch(/^apache\/kafka:3\.9\./);
    expect(s.kafka?.environment?.KAFKA_PROCESS_ROLES).toBe("broker,controller");
    expect(s.prometheus?.image).toMatch(/^prom\/prometheus:v2\./);
  });

  it("publishes the ports the app and the README expect", () => {
    expect(compose.services.redis?.ports).toContain("127.0.0.1:6379:6379");
    expect(compose.services.kafka?.ports).toContain("127.0.0.1:9092:9092");
    // Prometheus scrapes 127.0.0.1:3000 (infra/prometheus/prometheus.yml): it must share the host network with the app.
    expect(compose.services.prometheus?.network_mode).toBe("host");
    for (const a of APPS) expect(compose.services[a]?.network_mode).toBe("host");
    expect(compose.services["app-1"]?.environment?.KAFKA_BROKERS).toBe("127.0.0.1:9092");
    // Prometheus sends alerts to 127.0.0.1:9093 (prometheus.yml); the KRaft controller must not hold that port.
    expect(compose.services.alertmanager?.ports).toContain("127.0.0.1:9093:9093");
    expect(compose.services["app-2"]?.environment?.ALERTMANAGER_URL).toBe("http://127.0.0.1:9093");
    expect(compose.services.kafka?.environment?.KAFKA_LISTENERS).not.toMatch(/:9093\b/);
    expect(readFileSync(join(root, "infra/kafka/server.properties.template"), "utf8")).not.toMatch(/:9093\b/);
    expect(readFileSync(join(root, "infra/prometheus/prometheus.yml"), "utf8")).toMatch(
      /targets: \["127\.0\.0\.1:9093"\]/,
    );
  });

  it("mounts and builds only paths that exist in the repo", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const v of svc.volumes ?? []) {
        const host = v.split(":")[0] ?? "";
        // A named volume (no path) is docker's, declared under `volumes:`.
        if (!host.startsWith(".")) {
          expect(Object.keys(compose.volumes ?? {}), `${name} uses volume ${host}`).toContain(host);
          continue;
        }
        expect(existsSync(join(root, host)), `${name} mounts ${host}`).toBe(true);
      }
      if (svc.build) {
        expect(
          existsSync(join(root, svc.build.context, svc.build.dockerfile)),
          `${name} builds ${svc.build.dockerfile}`,
        ).toBe(true);
      }
    }
    const promCfg = compose.services.prometheus?.command?.find((c) => c.startsWith("--config.file="));
    expect(promCfg).toBe("--config.file=/etc/prometheus-compose/prometheus.yml");
    expect(compose.services.prometheus?.volumes).toContain(
      "./infra/compose/prometheus.yml:/etc/prometheus-compose/prometheus.yml:ro",
    );
    expect(existsSync(join(root, "infra/prometheus/prometheus.yml"))).toBe(true);
    const rules = readFileSync(join(root, "infra/prometheus/prometheus.yml"), "utf8");
    for (const m of rules.matchAll(/^\s+- (rules\/\S+)$/gm)) {
      expect(existsSync(join(root, "infra/prometheus", m[1] ?? "")), `rule file ${m[1]}`).toBe(true);
    }
  });

  it("Prometheus scrapes each replica on its own port with every rule file of the stack's config", () => {
    const prom = parse(readFileSync(join(root, "infra/compose/prometheus.yml"), "utf8")) as {
      rule_files: string[];
      scrape_configs: Array<{ metrics_path: string; static_configs: Array<{ targets: string[] }> }>;
    };
    const ports = APPS.map((a) => compose.services[a]?.environment?.PORT);
    expect(ports).toEqual(["3001", "3002"]);
    const job = prom.scrape_configs.find((j) => j.metrics_path === "/api/metrics");
    expect(job?.static_configs.flatMap((c) => c.targets).sort()).toEqual(ports.map((p) => `127.0.0.1:${p}`));
    // The stack's rule files (infra/prometheus/prometheus.yml) are all matched by the compose config's glob, none of promtool's tests.
    expect(prom.rule_files).toEqual(["/etc/prometheus/rules/*.yml"]);
    const stack = parse(readFileSync(join(root, "infra/prometheus/prometheus.yml"), "utf8")) as {
      rule_files: string[];
    };
    for (const f of stack.rule_files) expect(f, `${f} is directly in rules/`).toMatch(/^rules\/[^/]+\.yml$/);
  });

  it("two replicas share one PostgreSQL (kept in a volume) and answer behind one port", () => {
    const s = compose.services;
    expect(s.postgres?.image).toMatch(/^postgres:1[5-9]/);
    expect(s.postgres?.volumes).toContain("pgdata:/var/lib/postgresql/data");
    expect(s.postgres?.healthcheck?.test).toContain("pg_isready");
    const urls = APPS.map((a) => s[a]?.environment?.DATABASE_URL);
    expect(urls[0]).toMatch(/^postgres:\/\/dedup:.*@127\.0\.0\.1:5432\/dedup_health$/);
    expect(urls[1]).toBe(urls[0]);
    for (const a of APPS) {
      expect(s[a]?.build?.dockerfile).toBe("infra/app.Dockerfile");
      expect(s[a]?.depends_on).toMatchObject({ postgres: { condition: "service_healthy" } });
    }
    expect(s.lb?.network_mode).toBe("host");
    const nginx = readFileSync(join(root, "infra/compose/nginx.conf"), "utf8");
    expect(nginx).toMatch(/listen 127\.0\.0\.1:3000;/);
    expect([...nginx.matchAll(/server (127\.0\.0\.1:\d+)/g)].map((m) => m[1])).toEqual([
      "127.0.0.1:3001",
      "127.0.0.1:3002",
    ]);
    expect(nginx).toMatch(/proxy_set_header Host \$http_host;/);
    // The client is appended, never replaced: a client that forwards an address of its own is not taken as local (server/access.ts).
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
  });

  it("the image is multi-stage: built with dev dependencies, run from the standalone output without them, as a non-root user, with a health check", () => {
    const st = stages(dockerfile);
    expect(st.map((x) => x.name)).toEqual(["deps", "build", "run"]);
    const [deps, build, run] = st;
    expect(deps!.lines).toContain("RUN npm ci --no-audit --no-fund");
    expect(build!.lines).toContain("RUN npx next build");
    // The last stage starts from a fresh base and takes only the standalone server, its static files and the runbook.
    expect(run!.from).toBe(deps!.from);
    const copies = run!.lines.filter((l) => l.startsWith("COPY"));
    expect(copies).toEqual([
      "COPY --from=build /app/.next/standalone ./",
      "COPY --from=build /app/.next/static ./.next/static",
      "COPY --from=build /app/RUNBOOK.md ./RUNBOOK.md",
    ]);
    expect(run!.lines.some((l) => /npm (ci|install)|node_modules/.test(l))).toBe(false);
    const user = run!.lines.find((l) => l.startsWith("USER "));
    expect(user).toBe("USER app");
    expect(run!.lines.indexOf(user!)).toBeLessThan(run!.lines.findIndex((l) => l.startsWith("CMD")));
    expect(run!.lines.find((l) => l.startsWith("HEALTHCHECK"))).toMatch(/\/healthz/);
    expect(run!.lines).toContain("ENV NODE_ENV=production");
    const next = readFileSync(join(root, "next.config.js"), "utf8");
    expect(next).toMatch(/output: "standalone"/);
    // next build copies .env and .env.production into the standalone output: the build context must not hold them.
    const ignored = readFileSync(join(root, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining([".env", ".env.*", "node_modules", ".next", ".git"]));
  });

  it("the app binds loopback by default, and the image beyond loopback is read-only without WORKSHOP_TOKEN", () => {
    for (const a of APPS) {
      expect(compose.services[a]?.environment?.HOST).toBe("${HOST:-127.0.0.1}");
      expect(compose.services[a]?.environment?.WORKSHOP_TOKEN).toBe("${WORKSHOP_TOKEN:-}");
    }
    // The standalone server binds $HOSTNAME: the image sets it from HOST, so server/access.ts knows the bind
    // (Next records it as the origin; 0.0.0.0 = all interfaces = read-only without a token).
    expect(dockerfile).toMatch(/^CMD \["sh", "-c", "HOSTNAME=\\"\$HOST\\" exec node server\.js"\]$/m);
    expect(dockerfile).toMatch(/^ENV HOST=0\.0\.0\.0$/m);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/-H \$\{HOST:-127\.0\.0\.1\}/);
  });
});
