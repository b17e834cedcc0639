/**
 * dedup-health's consumer middleware library: a Watermill-style router and middleware stack with a
 * Deduplicator on Redis that loses nothing (spec §2, §4, §7, §10). Framework-free: imports only
 * Node built-ins, its own files, and (types of) ioredis / prom-client.
 */
export * from "./message";
export * from "./errors";
export * from "./pubsub";
export * from "./router";
export * from "./repository";
export * from "./policy";
