/**
 * Runs once when the Next.js server starts (nodejs runtime only): validates the configuration and
 * starts the demo consumer; see server/startup.ts.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startup } = await import("./server/startup");
    await startup();
  }
}
