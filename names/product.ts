/**
 * The names of the product's own services and topics: the demo's topic and the workshop's service.
 * The server's configuration, the API shapes and the pages read them here. **Imports nothing.**
 */

/** The demo topic's default (`DEMO_TOPIC`; 6 partitions, created by `npm run stack:up`). */
export const DEMO_TOPIC = "demo.events";

/**
 * The `service` label and first key segment of every workshop run. Its series live on the
 * workshop's own registry (never `/api/metrics`), and the Overview, alerts and capacity never list
 * a handler of this service.
 */
export const WORKSHOP_SERVICE = "workshop";
