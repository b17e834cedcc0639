import type { Metadata } from "next";
import { Suspense } from "react";
import { LoadingState } from "@/components/panel";
import { MessageView } from "@/components/records/message-view";

export const metadata: Metadata = { title: "Message" };

/** One Kafka record (payload, headers, key, position, time, size), or the records of a message UUID. */
export default function RecordsPage() {
  return (
    <>
      <h1 className="text-xl font-semibold">Message</h1>
      <Suspense fallback={<LoadingState label="Loading…" height={160} />}>
        <MessageView />
      </Suspense>
    </>
  );
}
