import { randomBytes } from "node:crypto";
import { Client } from "pg";

/** The stack's PostgreSQL (`npm run stack:up`), database `test`: where test databases are made. */
export const STACK_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

/** A database of a test's own on the stack's PostgreSQL, dropped by `drop()` (with any session still in it). */
export interface OwnDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates the database `<prefix><random>` (prefix: lower-case letters, digits, `_`). */
export async function createOwnDatabase(prefix: string, adminUrl = STACK_DATABASE_URL): Promise<OwnDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new RangeError(`prefix: expected a lower-case SQL name, got ${prefix}`);
  const name = `${prefix}${randomBytes(4).toString("hex")}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    name,
    url: u.toString(),
    async drop() {
      const c = new Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
