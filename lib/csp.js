// @ts-check
/**
 * The Content-Security-Policy, written once: proxy.ts sets it per request on pages and API answers
 * (with a fresh script nonce), next.config.js on the build's static files (no nonce). CommonJS so
 * that next.config.js can `require` it; lib/csp.d.ts types it for the TypeScript side.
 */

/**
 * The Content-Security-Policy of a page: scripts only with this request's nonce (Next.js puts it on
 * its own scripts when it finds it in the request's CSP header; the layout puts it on the theme
 * script) and what they load (`'strict-dynamic'`); no `'unsafe-inline'` for scripts. Without a
 * nonce, scripts from `'self'` only. `'unsafe-eval'` only in development (React refresh).
 * @param {string | null} nonce
 * @param {boolean} [dev]
 * @returns {string}
 */
function pageCsp(nonce, dev = process.env.NODE_ENV !== "production") {
  const scripts = nonce ? `'self' 'nonce-${nonce}' 'strict-dynamic'` : "'self'";
  return [
    "default-src 'self'",
    `script-src ${scripts}${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

module.exports = { pageCsp };
