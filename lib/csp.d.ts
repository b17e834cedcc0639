/** Types of lib/csp.js (CommonJS, shared by next.config.js and proxy.ts). */
/** The Content-Security-Policy of a page; `nonce` null for the static files. See lib/csp.js. */
export function pageCsp(nonce: string | null, dev?: boolean): string;
