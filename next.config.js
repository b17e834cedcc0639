// @ts-check
/**
 * Security headers on every response: nosniff, Referrer-Policy, X-Frame-Options here; the
 * Content-Security-Policy of pages and API answers is set per request by proxy.ts (a fresh script
 * nonce for each page, no `'unsafe-inline'` for scripts). The build's static files, which proxy.ts
 * does not see, get the same policy without a nonce from here.
 */
const dev = process.env.NODE_ENV !== "production";
const staticCsp = [
  "default-src 'self'",
  `script-src 'self'${dev ? " 'unsafe-eval'" : ""}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Node-only clients stay out of the server bundles (they load native/optional modules at run time).
  serverExternalPackages: ["kafkajs", "ioredis", "pg", "prom-client"],
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
          { key: "X-Frame-Options", value: "DENY" },
        ],
      },
      { source: "/_next/:path*", headers: [{ key: "Content-Security-Policy", value: staticCsp }] },
    ];
  },
};

module.exports = nextConfig;
