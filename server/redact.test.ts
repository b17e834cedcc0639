import { describe, expect, it } from "vitest";
import { failureKind, redact, redactBody, REDACTED } from "./redact";

const targets = {
  PROMETHEUS_URL: "http://promUser:promPass9@prom.internal:9090/prefix/api?token=qTok42",
  REDIS_URL: "redis://redisUser:r3dPass@10.1.2.3:6380/2",
  REDIS_CLUSTER_NODES: ["redis-a.svc:7000", "10.0.0.12:7001"],
  DATABASE_URL: "postgres://pgUser:pgPass7@db.internal:5432/app?sslmode=require",
  KAFKA_BROKERS: ["broker-1.internal:9092", "172.16.0.5:9093"],
};

/** Nothing of a configured value's secrets or location survives. */
function expectClean(s: string): void {
  for (const bad of [
    "promPass9",
    "promUser:",
    "prom.internal",
    ":9090",
    "qTok42",
    "r3dPass",
    "redisUser:",
    "10.1.2.3",
    "6380",
    "redis-a.svc",
    "10.0.0.12",
    "pgPass7",
    "pgUser:",
    "db.internal",
    "sslmode",
    "broker-1.internal",
    "172.16.0.5",
  ]) {
    expect(s, `"${bad}" in: ${s}`).not.toContain(bad);
  }
}

describe("redact", () => {
  it("replaces each configured URL, whole or in parts, by its component name", () => {
    const s = redact(
      `prometheus: ${targets.PROMETHEUS_URL} unreachable; redis ${targets.REDIS_URL} connect ECONNREFUSED 10.1.2.3:6380; ${targets.DATABASE_URL} password authentication failed for pgUser:pgPass7`,
      targets,
    );
    expectClean(s);
    expect(s).toContain("<prometheus>");
    expect(s).toContain("<redis>");
    expect(s).toContain("<postgres>");
    expect(s).toContain("ECONNREFUSED");
  });

  it("hides PROMETHEUS_URL's userinfo, path and query also when only the origin or host is quoted", () => {
    for (const quoted of [
      "http://prom.internal:9090",
      "prom.internal:9090",
      "promUser:promPass9@prom.internal",
      "?token=qTok42",
      "/prefix/api?token=qTok42",
    ]) {
      expectClean(redact(`fetch ${quoted} failed`, targets));
    }
  });

  it("handles rediss:// and REDIS_CLUSTER_NODES entries", () => {
    const t = {
      REDIS_URL: "rediss://default:s3cretPw@cache.example.com:6380/0",
      REDIS_CLUSTER_NODES: ["redis-a.svc:7000", "10.0.0.12:7001"],
    };
    const s = redact(
      "rediss://default:s3cretPw@cache.example.com:6380/0 ETIMEDOUT; MOVED 1234 10.0.0.12:7001; node redis-a.svc:7000 down",
      t,
    );
    for (const bad of ["s3cretPw", "default:", "cache.example.com", "10.0.0.12", "redis-a.svc"])
      expect(s).not.toContain(bad);
    expect(s).toContain("MOVED 1234");
  });

  it("handles KAFKA_BROKERS host:port lists", () => {
    const s = redact(
      "Connection error: connect ECONNREFUSED 172.16.0.5:9093 (broker-1.internal:9092, 172.16.0.5:9093)",
      targets,
    );
    expectClean(s);
    expect(s).toContain("<kafka>");
  });

  it("hides URLs, userinfo, IPs and host:port that the configuration does not name", () => {
    const s = redact(
      "GET http://u:p@other.example.net:8080/x?q=1 failed; connect ECONNREFUSED 192.168.7.9:6379; [::1]:9092 reset; broker kafka-3.local:9094; a:b@c",
      {},
    );
    for (const bad of ["other.example.net", "u:p", "q=1", "192.168.7.9", "::1", "kafka-3.local", "a:b@"])
      expect(s).not.toContain(bad);
    expect(s).toContain(REDACTED);
  });

  it("leaves ordinary text, key names and numbers alone", () => {
    const text = "notification:dedup:on-review-created has 12 keys; p99 0.004 s at 2026-12-01T18:22:52.123Z; step 15 s";
    expect(redact(text, targets)).toBe(text);
  });

  it("is idempotent", () => {
    const once = redact(`x ${targets.REDIS_URL} y 1.2.3.4:5`, targets);
    expect(redact(once, targets)).toBe(once);
  });
});

describe("redact: a host shared by several upstreams", () => {
  const local = {
    PROMETHEUS_URL: "http://127.0.0.1:9090",
    REDIS_URL: "redis://127.0.0.1:6379",
    KAFKA_BROKERS: ["127.0.0.1:9092"],
  };
  it("names the component by host:port, and a bare host as a host, not as one of them", () => {
    expect(redact("connect ECONNREFUSED 127.0.0.1:9092", local)).toBe("connect ECONNREFUSED <kafka>");
    expect(redact("connect ECONNREFUSED 127.0.0.1:6379", local)).toBe("connect ECONNREFUSED <redis>");
    // A consumer group member's address (kafkajs reports "/127.0.0.1"): no upstream's.
    expect(redact("/127.0.0.1", local)).toBe("/<host>");
  });
});

describe("redactBody", () => {
  it("redacts `detail`/`error`/`message` strings at any depth without touching the input", () => {
    const body = {
      upstream: {
        prometheus: { status: "down", detail: "prometheus: http://promUser:promPass9@prom.internal:9090 unreachable" },
      },
      items: [{ detail: "connect ECONNREFUSED 10.1.2.3:6380" }],
      name: "keep 10.9.9.9",
    };
    const out = redactBody(body, targets);
    expectClean(JSON.stringify(out.upstream) + JSON.stringify(out.items));
    // Not a detail field: only configured values are replaced there.
    expect(out.name).toBe("keep 10.9.9.9");
    expect(body.upstream.prometheus.detail).toContain("promPass9");
  });
});

describe("redact: the database user", () => {
  it("is never named: not in an error detail, nor in a DLQ record's reason field that echoes a consumer's failure", () => {
    const detail = redact(
      'audit store unavailable: password authentication failed for user "pgUser"; role "other_app" does not exist',
      targets,
    );
    expect(detail).not.toMatch(/pgUser|other_app/);
    expect(detail).toContain(`role "${REDACTED}"`);
    const body = redactBody(
      { records: [{ reason: 'dedup store failed: password authentication failed for user "pgUser"' }] },
      targets,
    );
    expect(JSON.stringify(body)).not.toContain("pgUser");
    // The bare word is left alone: a user named like an ordinary word does not eat the text.
    expect(redact("dedup store failed", { DATABASE_URL: "postgres://dedup@db:5432/x" })).toBe("dedup store failed");
  });
});

describe("failureKind", () => {
  it("names the kind of failure from codes and texts", () => {
    expect(failureKind(Object.assign(new Error("connect ECONNREFUSED 1.2.3.4:5"), { code: "ECONNREFUSED" }))).toBe(
      "connection refused",
    );
    expect(
      failureKind(new TypeError("fetch failed", { cause: Object.assign(new Error("x"), { code: "ENOTFOUND" }) })),
    ).toBe("host not found");
    expect(failureKind(new DOMException("The operation was aborted due to timeout", "TimeoutError"))).toBe("timed out");
    expect(failureKind(new Error("WRONGPASS invalid username-password pair"))).toBe("authentication failed");
    expect(failureKind("weird")).toBe("request failed");
  });
});
