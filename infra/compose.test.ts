import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(__dirname, "..");

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  ports?: string[];
  volumes?: string[];
  network_mode?: string;
  environment?: Record<string, string>;
  command?: string[];
}

const compose = parse(readFileSync(join(root, "docker-compose.yml"), "utf8")) as { services: Record<string, Service> };

describe("docker-compose.yml (no Docker engine here: checked by parsing)", () => {
  it("runs Redis 7, Kafka 3.9 in KRaft mode, Prometheus, Alertmanager and the app", () => {
    const s = compose.services;
    expect(Object.keys(s).sort()).toEqual(["alertmanager", "app", "kafka", "prometheus", "redis"]);
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
    expect(compose.services.app?.network_mode).toBe("host");
    expect(compose.services.app?.environment?.KAFKA_BROKERS).toBe("127.0.0.1:9092");
    // Prometheus sends alerts to 127.0.0.1:9093 (prometheus.yml); the KRaft controller must not hold that port.
    expect(compose.services.alertmanager?.ports).toContain("127.0.0.1:9093:9093");
    expect(compose.services.app?.environment?.ALERTMANAGER_URL).toBe("http://127.0.0.1:9093");
    expect(compose.services.kafka?.environment?.KAFKA_LISTENERS).not.toMatch(/:9093\b/);
    expect(readFileSync(join(root, "infra/kafka/server.properties.template"), "utf8")).not.toMatch(/:9093\b/);
    expect(readFileSync(join(root, "infra/prometheus/prometheus.yml"), "utf8")).toMatch(/targets: \["127\.0\.0\.1:9093"\]/);
  });

  it("mounts and builds only paths that exist in the repo", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const v of svc.volumes ?? []) {
        const host = v.split(":")[0] ?? "";
        expect(existsSync(join(root, host)), `${name} mounts ${host}`).toBe(true);
      }
      if (svc.build) {
        expect(existsSync(join(root, svc.build.context, svc.build.dockerfile)), `${name} builds ${svc.build.dockerfile}`).toBe(true);
      }
    }
    const promCfg = compose.services.prometheus?.command?.find((c) => c.startsWith("--config.file="));
    expect(promCfg).toBe("--config.file=/etc/prometheus/prometheus.yml");
    expect(existsSync(join(root, "infra/prometheus/prometheus.yml"))).toBe(true);
    const rules = readFileSync(join(root, "infra/prometheus/prometheus.yml"), "utf8");
    for (const m of rules.matchAll(/^\s+- (rules\/\S+)$/gm)) {
      expect(existsSync(join(root, "infra/prometheus", m[1] ?? "")), `rule file ${m[1]}`).toBe(true);
    }
  });

  it("the app binds loopback by default, and the image beyond loopback is read-only without WORKSHOP_TOKEN", () => {
    expect(compose.services.app?.environment?.HOST).toBe("${HOST:-127.0.0.1}");
    expect(compose.services.app?.environment?.WORKSHOP_TOKEN).toBe("${WORKSHOP_TOKEN:-}");
    const docker = readFileSync(join(root, "infra/app.Dockerfile"), "utf8");
    // next start gets -H "$HOST", so server/access.ts knows the bind (no -H = all interfaces = read-only without a token).
    expect(docker).toMatch(/CMD \[.*next start -p 3000 -H \\"\$HOST\\"/);
    expect(docker).toMatch(/^ENV HOST=0\.0\.0\.0$/m);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/-H \$\{HOST:-127\.0\.0\.1\}/);
  });
});
