/** The tables of a worker with `store: "inbox"` (test/faults/worker.ts), in the run's schema. */

/** The PostgreSQL inbox (`PostgresInboxRepository`'s table). */
export const INBOX_TABLE = "inbox";

/** The handler's side effects: `(handler text, uuid text)`, no unique key (a second write is a second row). */
export const INBOX_EFFECTS = "inbox_effects";
