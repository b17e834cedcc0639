import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "./config";

describe("parseConfig", () => {
  it("is embedded with nothing configured, and treats empty values as unset", () => {
    const c = parseConfig({ REDIS_URL: "", KAFKA_BROKERS: "  " });
    expect(c.mode).toBe("embedded");
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.DEDUP_PREFIXES).toEqual(["*:dedup:*"]);
  });

  it("is real when Redis or Kafka is configured", () => {
    const c = parseConfig({ REDIS_URL: "redis://127.0.0.1:6379", KAFKA_BROKERS: "127.0.0.1:9092,localhost:9093" });
    expect(c.mode).toBe("real");
    expect(c.KAFKA_BROKERS).toEqual(["127.0.0.1:9092", "localhost:9093"]);
  });

  it("stops on an invalid REDIS_URL with a message naming the variable and the expected form", () => {
    expect(() => parseConfig({ REDIS_URL: "localhost:6379" })).toThrow(ConfigError);
    expect(() => parseConfig({ REDIS_URL: "http://x" })).toThrow(/REDIS_URL.*redis:\/\//);
  });

  it("names KAFKA_BROKERS, PROMETHEUS_URL and DEMO_RATE when they are malformed", () => {
    expect(() => parseConfig({ KAFKA_BROKERS: "nohostport" })).toThrow(/KAFKA_BROKERS/);
    expect(() => parseConfig({ PROMETHEUS_URL: "prom:9090" })).toThrow(/PROMETHEUS_URL/);
    expect(() => parseConfig({ DEMO_RATE: "fast" })).toThrow(/DEMO_RATE/);
  });
});

describe("parseConfig: the PostgreSQL inbox table the key browser reads", () => {
  it("reads the library's default table in DATABASE_URL's database, or INBOX_DATABASE_URL's", () => {
    expect(parseConfig({}).inbox).toBeNull();
    expect(parseConfig({ DATABASE_URL: "postgres://a@db:5432/app" }).inbox).toEqual({
      url: "postgres://a@db:5432/app",
      schema: "public",
      table: "dedup_inbox",
    });
    expect(
      parseConfig({
        DATABASE_URL: "postgres://a@db:5432/app",
        INBOX_DATABASE_URL: "postgres://b@orders-db:5432/orders",
        INBOX_TABLE: "billing.inbox",
      }).inbox,
    ).toEqual({ url: "postgres://b@orders-db:5432/orders", schema: "billing", table: "inbox" });
    expect(parseConfig({ DATABASE_URL: "postgres://a@db:5432/app", INBOX_TABLE: "off" }).inbox).toBeNull();
  });

  it("stops on a malformed INBOX_TABLE or INBOX_DATABASE_URL, naming it", () => {
    for (const bad of ["Public.Inbox", "a.b.c", "inbox; drop table x", "1table"])
      expect(() => parseConfig({ DATABASE_URL: "postgres://a@db/app", INBOX_TABLE: bad }), bad).toThrow(/INBOX_TABLE/);
    expect(() => parseConfig({ INBOX_DATABASE_URL: "mysql://x" })).toThrow(/INBOX_DATABASE_URL/);
    expect(() => parseConfig({ INBOX_TABLE: "billing.inbox" })).toThrow(
      /INBOX_DATABASE_URL.*required with INBOX_TABLE/,
    );
  });
});

describe("parseConfig: access, binding and redaction variables", () => {
  it("ALLOWED_HOSTS is a list of host names or IP addresses without a port, empty by default", () => {
    expect(parseConfig({}).ALLOWED_HOSTS).toEqual([]);
    expect(
      parseConfig({ ALLOWED_HOSTS: " Dash.Example.com, .corp.example ,10.0.0.5,[fd00::5],fd00::6" }).ALLOWED_HOSTS,
    ).toEqual(["dash.example.com", ".corp.example", "10.0.0.5", "[fd00::5]", "fd00::6"]);
    for (const bad of ["dash.example.com:3000", "http://dash.example.com", "*", "a b", "evil.com/x", "-x.example"])
      expect(() => parseConfig({ ALLOWED_HOSTS: bad }), bad).toThrow(/ALLOWED_HOSTS.*host names/);
  });

  it("TRUSTED_PROXIES is a list of IP addresses, empty by default", () => {
    expect(parseConfig({}).TRUSTED_PROXIES).toEqual([]);
    expect(parseConfig({ TRUSTED_PROXIES: " 127.0.0.1, ::1 ,10.0.0.2" }).TRUSTED_PROXIES).toEqual([
      "127.0.0.1",
      "::1",
      "10.0.0.2",
    ]);
    expect(() => parseConfig({ TRUSTED_PROXIES: "proxy.example.com" })).toThrow(/TRUSTED_PROXIES.*IP addresses/);
    expect(() => parseConfig({ TRUSTED_PROXIES: "10.0.0.0/8" })).toThrow(/TRUSTED_PROXIES/);
    expect(() => parseConfig({ TRUSTED_PROXIES: "300.1.1.1" })).toThrow(/TRUSTED_PROXIES/);
  });

  it("SHOW_UPSTREAM_DETAIL is on or off (default off), HOST a host or address", () => {
    expect(parseConfig({}).SHOW_UPSTREAM_DETAIL).toBe("off");
    expect(parseConfig({ SHOW_UPSTREAM_DETAIL: "on" }).SHOW_UPSTREAM_DETAIL).toBe("on");
    expect(() => parseConfig({ SHOW_UPSTREAM_DETAIL: "yes" })).toThrow(/SHOW_UPSTREAM_DETAIL/);
    expect(parseConfig({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
    expect(() => parseConfig({ HOST: "a b" })).toThrow(/HOST/);
  });

  it("ALERTMANAGER_URL is an optional http(s) URL; DEMO_TOPIC (default demo.events) is CONSUMER_TOPICS' default", () => {
    expect(parseConfig({}).ALERTMANAGER_URL).toBeUndefined();
    expect(parseConfig({ ALERTMANAGER_URL: "http://127.0.0.1:9093" }).ALERTMANAGER_URL).toBe("http://127.0.0.1:9093");
    expect(() => parseConfig({ ALERTMANAGER_URL: "127.0.0.1:9093" })).toThrow(/ALERTMANAGER_URL/);
    expect(parseConfig({}).CONSUMER_TOPICS).toEqual(["demo.events"]);
    expect(parseConfig({ DEMO_TOPIC: "orders" }).CONSUMER_TOPICS).toEqual(["orders"]);
    expect(parseConfig({ DEMO_TOPIC: "orders", CONSUMER_TOPICS: "a,b" }).CONSUMER_TOPICS).toEqual(["a", "b"]);
    expect(() => parseConfig({ DEMO_TOPIC: "a b" })).toThrow(/DEMO_TOPIC/);
  });

  it("RUNBOOK_BASE_URL is the app's own /runbook by default, an http(s) URL or a path of the app; anything else names the variable", () => {
    expect(parseConfig({}).RUNBOOK_BASE_URL).toBe("/runbook");
    expect(parseConfig({ RUNBOOK_BASE_URL: "https://wiki.example.com/dedup/RUNBOOK.md" }).RUNBOOK_BASE_URL).toBe(
      "https://wiki.example.com/dedup/RUNBOOK.md",
    );
    expect(parseConfig({ RUNBOOK_BASE_URL: "/ops/runbook" }).RUNBOOK_BASE_URL).toBe("/ops/runbook");
    for (const bad of ["javascript:alert(1)", "//evil.example.com/x", "runbook", "/a b"])
      expect(() => parseConfig({ RUNBOOK_BASE_URL: bad }), bad).toThrow(
        /RUNBOOK_BASE_URL — expected an http\(s\):\/\/ URL or a path/,
      );
  });
});
