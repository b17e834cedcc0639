/**
 * Produced messages are published before their delivery counts as done, on Redis: a standalone
 * server (batch scripts, and pipelines) and the stack's 3-master Cluster.
 */
import { onEachRedisStore } from "@/server/testing/redis-stores";
import { producedMessagesSuite } from "./produced-messages.suite";

onEachRedisStore(
  "produced messages",
  {
    servicePrefix: "prod",
    keysOf: (service) => Array.from({ length: 20 }, (_, i) => `${service}:dedup:confirm:in-${i}`),
  },
  (fresh) =>
    producedMessagesSuite(() => {
      const { repository, service } = fresh();
      return { repository, service };
    }),
);
