/** Types of lib/router-state-pattern.js (CommonJS, shared by next.config.js and its tests). */
/** How deep a router state tree the pattern accepts (root = 1). */
export const ROUTER_STATE_MAX_DEPTH: number;
/** The `Next-Router-State-Tree` header of a router state Next's renderer parses (no anchors). */
export const ROUTER_STATE_PATTERN: string;
/** A `has` value matching any header that is not {@link ROUTER_STATE_PATTERN}. */
export const NOT_ROUTER_STATE_PATTERN: string;
/** The `detail` of the 400 that refuses a router state Next's renderer cannot parse. */
export const ROUTER_STATE_REFUSED_DETAIL: string;
