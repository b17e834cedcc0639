import { HealthStrip } from "@/components/health-strip";
import { Providers } from "./providers";

export default function HomePage() {
  return (
    <Providers>
      <main className="mx-auto max-w-5xl space-y-4 p-6">
        <h1 className="text-2xl font-semibold">dedup-health</h1>
        <HealthStrip />
      </main>
    </Providers>
  );
}
