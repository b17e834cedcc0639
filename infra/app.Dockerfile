# The dashboard and its demo consumer, for docker-compose.yml.
# It listens on $HOST (default 0.0.0.0, so that a published port reaches it). Beyond loopback the
# state-changing endpoints need WORKSHOP_TOKEN; without one the app starts read-only (embedded mode,
# without KAFKA_BROKERS/REDIS_URL, too) and says so in its first log lines ("[dedup-health] access: read-only: …"). See docs/SECURITY.md.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npx next build
ENV NODE_ENV=production
ENV HOST=0.0.0.0
EXPOSE 3000
CMD ["sh", "-c", "exec node_modules/.bin/next start -p 3000 -H \"$HOST\""]
