#!/usr/bin/env bash
# `npm test`: brings up the stack it needs (Redis, Kafka, Prometheus, a Redis Cluster), builds the app for the
# browser tests, runs every vitest project (unit, integration, e2e, promtool rule tests), prints
# one closing line `N passed, N failed`, and stops only what it started.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PIDS="$ROOT/.stack/pids"
mkdir -p "$PIDS" test-results

COMPONENTS=(redis kafka prometheus redis-cluster)
pidfile() { if [ "$1" = redis-cluster ]; then echo "$PIDS/redis-7000.pid"; else echo "$PIDS/$1.pid"; fi; }

# What was already ours before this run stays up afterwards.
before=()
for c in "${COMPONENTS[@]}"; do [ -f "$(pidfile "$c")" ] && before+=("$c"); done

cleanup() {
  local rc=$?
  local mine=()
  for c in "${COMPONENTS[@]}"; do
    if [ -f "$(pidfile "$c")" ] && [[ " ${before[*]:-} " != *" $c "* ]]; then mine+=("$c"); fi
  done
  if [ ${#mine[@]} -gt 0 ]; then bash scripts/stack.sh down "${mine[@]}" || true; fi
  exit $rc
}
trap cleanup EXIT INT TERM

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "[test] installing Debian's chromium for the browser tests"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >test-results/apt-chromium.log 2>&1 \
      || { echo "[test] error: could not install chromium (see test-results/apt-chromium.log)"; exit 1; }
  else
    echo "[test] error: /usr/bin/chromium is missing: apt-get install chromium"; exit 1
  fi
fi
# The Redis Cluster (7000-7002) is for the *.cluster.integration.test.ts files (issue 10).
bash scripts/stack.sh up "${COMPONENTS[@]}"
echo "[test] type-check"
npx tsc --noEmit -p .
echo "[test] next build (for the browser tests)"
npx next build > test-results/next-build.log 2>&1 || { tail -n 40 test-results/next-build.log; exit 1; }

echo "[test] vitest: unit, integration, e2e"
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
rc=$?
set -e
node -e '
  const r = require("./test-results/vitest.json");
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
' || true
exit $rc
