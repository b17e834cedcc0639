import { config, ConfigError } from "./config";

/**
 * Server start-up: validate the configuration (an invalid variable stops the process with a message
 * naming it), then start the background work (the demo consumer, unless DEMO=off).
 */
export async function startup(): Promise<void> {
  try {
    config();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`[dedup-health] ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
}
