import { LoadingState } from "@/components/panel";

/** Shown while a route segment loads. */
export default function Loading() {
  return <LoadingState label="Loading…" height={240} />;
}
