// @ts-check
/**
 * Security headers on every response: nosniff, Referrer-Policy, X-Frame-Options here; the
 * Content-Security-Policy of pages and API answers is set per request by proxy.ts (a fresh script
 * nonce for each page, no `'unsafe-inline'` for scripts). The build's static files, which proxy.ts
 * does not see, get the same policy without a nonce from here.
 */
const dev = process.env.NODE_ENV !== "production";
// The same policy as proxy.ts sets on pages (lib/csp.js), without a nonce.
const staticCsp = require("./lib/csp.js").pageCsp(null, dev);
const { NOT_ROUTER_STATE_PATTERN } = require("./lib/router-state-pattern.js");

/**
 * Hosts whose pages may load the dev server's own resources (`/_next/*`, the HMR WebSocket):
 * loopback in both families and every address of this machine's interfaces, so whichever address
 * `next dev` prints ("Local" or "Network") hydrates. Next.js 16 refuses dev resources to any other
 * origin (`allowedDevOrigins`); it matches the Origin's hostname, which for IPv6 is in brackets.
 * Link-local IPv6 addresses are left out (a zone id is not part of a URL's hostname).
 * @returns {string[]}
 */
function devOrigins() {
  const hosts = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);
  for (const list of Object.values(require("node:os").networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === "IPv4") hosts.add(a.address);
      else if (!a.address.toLowerCase().startsWith("fe80:")) hosts.add(`[${a.address}]`);
    }
  }
  const host = require("node:os").hostname();
  if (host) hosts.add(host.toLowerCase());
  return [...hosts];
}

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  // The production image (infra/app.Dockerfile) runs `node .next/standalone/server.js`: the server
  // with only the files it imports traced into .next/standalone (no dev dependencies, no sources).
  // `next start` still serves the same build (with a warning) for the e2e tests and `npm start`.
  output: "standalone",
  // `npm test` type-checks the whole project with `tsc --noEmit` right before `next build`
  // (scripts/test-vitest.sh): the build's own check of the same files (17 s on 2 cores) is skipped
  // there, never in a plain `next build`.
  typescript: { ignoreBuildErrors: process.env.DEDUP_HEALTH_TYPECHECKED === "1" },
  poweredByHeader: false,
  // No dev-mode "N" badge: it sat over page titles on a presenter's 1280×720 screen.
  devIndicators: false,
  // proxy.ts redirects `/path/` to `/path` itself, after its Host check and with the security
  // headers; Next.js' own redirect answered before any of that, with none of them.
  skipTrailingSlashRedirect: true,
  // proxy.ts sees the request as it came: the client router's headers (Next strips them for a proxy
  // otherwise), so that it can refuse an empty `Next-Router-State-Tree`, which the rewrites below
  // cannot match; and the URL with its `_rsc` query (proxy.ts reads only the path).
  skipProxyUrlNormalize: true,
  experimental: {
    // What Next.js buffers of a request body for proxy.ts (default 10 MB per request): the largest
    // body any route reads (MAX_BODY_BYTES, server/access.ts). proxy.ts refuses a larger
    // Content-Length (413), a chunked API body (411) and any body to a page (405) before it is read.
    proxyClientMaxBodySize: 16_384,
  },
  // Dev only (production ignores it): see devOrigins() above.
  allowedDevOrigins: dev ? devOrigins() : [],
  // Node-only clients stay out of the server bundles (they load native/optional modules at run time).
  serverExternalPackages: ["kafkajs", "ioredis", "pg", "prom-client"],
  // A client-router request whose router state Next's renderer cannot parse answered a plain 500 on
  // any page; it is matched here, by pattern, before any route runs (an empty one in proxy.ts):
  // beyond the renderer's 40,000 characters, or not the URI-encoded router state tree Next's client
  // sends (lib/router-state-pattern.js: the shape Next asserts, unrolled 8 levels deep) → a 400.
  async rewrites() {
    const to = "/api/router-state-refused";
    return {
      beforeFiles: [
        {
          source: "/:path*",
          has: [{ type: "header", key: "next-router-state-tree", value: "[\\s\\S]{40001,}" }],
          destination: to,
        },
        {
          source: "/:path*",
          has: [{ type: "header", key: "next-router-state-tree", value: NOT_ROUTER_STATE_PATTERN }],
          destination: to,
        },
      ],
    };
  },
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
