/**
 * The key browser lists a PostgreSQL inbox handler's rows, in Chromium: an inbox table of its own
 * (a database of this file's own, `INBOX_TABLE` / `INBOX_DATABASE_URL`) beside the shared Redis;
 * the handler is in the tree marked "inbox" with its exact row count, and its page shows the rows
 * with their fingerprint, in the inbox's words. Saves test-results/screenshots/inbox-keys.png.
 */
import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresInboxRepository } from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";
import { createOwnDatabase, type OwnDatabase } from "@/server/testing/own-database";
import { REAL_ENV, screenshot, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const service = `e2e-inbox-${randomBytes(3).toString("hex")}`;
let db: OwnDatabase;

beforeAll(async () => {
  db = await createOwnDatabase("inbox_e2e_");
  const pool = new Pool({ connectionString: db.url, max: 1 });
  const repo = new PostgresInboxRepository(pgInboxPool(pool), { schema: "inbox_e2e" });
  await repo.ensureSchema();
  await pool.query(
    `INSERT INTO ${repo.table} (service, handler, uuid, position, fingerprint, state, expires_at)
     SELECT $1, 'on-paid', '01JF00000000000000000000' || lpad(i::text, 2, '0'), 'orders:0:' || i, 'fp' || i,
       'done:orders:0:' || i || '#fp' || i, now() + interval '1 hour' FROM generate_series(1, 3) i`,
    [service],
  );
  await pool.end();
}, 30_000);

afterAll(async () => {
  await db?.drop();
});

const app = appForTests({
  env: {
    REDIS_URL: REAL_ENV.REDIS_URL,
    SERVICE_NAME: service,
    DEMO: "off",
    DEDUP_PREFIXES: `${service}:dedup:*`,
    get INBOX_DATABASE_URL() {
      return db.url;
    },
    INBOX_TABLE: "inbox_e2e.dedup_inbox",
  },
});
const browser = browserForTests();

describe("the key browser over the PostgreSQL inbox (Chromium)", () => {
  it("lists an inbox handler marked inbox with its row count, and its rows with their fingerprint", async () => {
    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/keys?refresh=off`);
      const handler = page.getByTestId("tree-handler").filter({ hasText: "on-paid" });
      await handler.waitFor({ timeout: 60_000 });
      expect(await handler.getByTestId("tree-store").textContent()).toBe("inbox");
      expect(await handler.textContent()).toMatch(/on-paid\s*inbox\s*3/);
      await handler.click();
      const rows = page.getByTestId("key-row");
      await expect.poll(() => rows.count(), { timeout: 60_000 }).toBe(3);
      expect(await rows.first().textContent()).toContain("01JF0000000000000000000001");
      expect(await rows.first().getByTestId("key-fingerprint").textContent()).toBe("#fp1");
      expect(await page.getByTestId("scanned").textContent()).toMatch(
        /^read 3 rows of 3 rows under this prefix in the PostgreSQL inbox/,
      );
      await screenshot(page, "inbox-keys");
    });
  });
});
