# The dashboard and its demo consumer, for docker-compose.yml: a production image in three stages.
#   deps   installs every dependency (the build needs the dev ones: TypeScript, Tailwind, …)
#   build  runs `next build` with `output: "standalone"` (next.config.js): .next/standalone holds the
#          server and only the node_modules files it imports
#   run    copies the standalone server, the static files and RUNBOOK.md (read at run time by the
#          /runbook page) onto a fresh base: no dev dependencies, no sources, no npm cache; runs as
#          the unprivileged user `app` (uid 10001), which owns nothing it could rewrite.
# It listens on $HOST (default 0.0.0.0, so that a published port reaches it) and $PORT. Beyond
# loopback the state-changing endpoints need WORKSHOP_TOKEN; without one the app starts read-only
# (embedded mode, without KAFKA_BROKERS/REDIS_URL, too) and says so in its first log lines
# ("[dedup-health] access: read-only: …"). See docs/SECURITY.md and docs/SCALING.md.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN npx next build

FROM node:20-bookworm-slim AS run
WORKDIR /app
ENV NODE_ENV=production
ENV NEXT_TELEMETRY_DISABLED=1
ENV HOST=0.0.0.0
ENV PORT=3000
RUN groupadd --system --gid 10001 app && useradd --system --uid 10001 --gid app --no-create-home --shell /usr/sbin/nologin app
COPY --from=build /app/.next/standalone ./
COPY --from=build /app/.next/static ./.next/static
COPY --from=build /app/RUNBOOK.md ./RUNBOOK.md
USER app
EXPOSE 3000
# /healthz: the process serves (docs/SCALING.md); readiness of the upstreams is /readyz, not a reason to restart.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The standalone server binds $HOSTNAME; HOST keeps the name the rest of the app and docs use.
CMD ["sh", "-c", "HOSTNAME=\"$HOST\" exec node server.js"]
