import type { Metadata } from "next";
import { PageShell } from "@/components/page-shell";
import { MessageView } from "@/components/records/message-view";

export const metadata: Metadata = { title: "Messages" };

/** One Kafka record (payload, headers, key, position, time, size), or the records of a message UUID. */
export default function RecordsPage() {
  return (
    <PageShell title="Messages" loading="Loading…" height={160}>
      <MessageView />
    </PageShell>
  );
}
