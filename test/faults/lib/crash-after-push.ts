/**
 * Child process of side-effects.faults.test.ts: runs the demo handler's idempotent send
 * (`PostgresSideEffectStore.sendOnce`) and dies by SIGKILL right after the push went out, before
 * the transaction that records it commits — what a consumer SIGKILLed at that instant does. The
 * push carries the event id as the provider's idempotency key, as `notificationHandler` does,
 * unless the last argument is `naive` (a provider call without a key).
 *   node --import tsx test/faults/lib/crash-after-push.ts <databaseUrl> <schema> <handler> <eventId> [keyed|naive]
 */
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";

const [databaseUrl, schema, handler, eventId, mode = "keyed"] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
];
const store = new PostgresSideEffectStore({ connectionString: databaseUrl, schema, tablePrefix: "f", poolSize: 4 });
void store.sendOnce(handler, eventId, async () => {
  await store.push(handler, eventId, mode === "naive" ? {} : { idempotencyKey: eventId });
  process.kill(process.pid, "SIGKILL");
  await new Promise(() => undefined);
});
