#!/usr/bin/env bash
# `npm run test:vitest` (and, in parts, `npm test` = scripts/test-all.sh): brings up the stack it needs (Redis, Kafka, Prometheus, a Redis Cluster), builds the app for the
# browser tests, runs every vitest project (unit, integration, e2e, promtool rule tests), prints
# one closing line `N passed, N failed`, and stops only what it started.
# For scripts/test-all.sh, which runs the fault suite beside it (all optional; `npm run test:vitest` sets none):
#   TEST_PROJECTS=unit,integration*  only these vitest projects (wildcards allowed; default: all)
#   TEST_SKIP_BUILD=1                no type-check and no next build (an earlier run in this CI did them)
#   TEST_JSON=path                   vitest's JSON report (default test-results/vitest.json)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PIDS="$ROOT/.stack/pids"
mkdir -p "$PIDS" test-results

COMPONENTS=(redis kafka prometheus redis-cluster java-consumer-jar)
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
# The Redis Cluster (7000-7002) is for the *.cluster.integration.test.ts files; the Java consumer's jar is built here, not inside a timed test.
t=$SECONDS
bash scripts/stack.sh up "${COMPONENTS[@]}"
echo "[test] stack up: $((SECONDS - t)) s"
JSON_OUT=${TEST_JSON:-test-results/vitest.json}
if [ "${TEST_SKIP_BUILD:-0}" != 1 ]; then bash scripts/test-build.sh; fi

projects=()
if [ -n "${TEST_PROJECTS:-}" ]; then
  IFS=, read -r -a names <<< "$TEST_PROJECTS"
  for n in "${names[@]}"; do projects+=(--project "$n"); done
fi
echo "[test] vitest: ${TEST_PROJECTS:-unit, integration, e2e}"
t=$SECONDS
rm -f "$JSON_OUT"
set +e
npx vitest run "${projects[@]}" --reporter=default --reporter=json --outputFile.json="$JSON_OUT" "$@"
rc=$?
set -e
echo "[test] vitest ${TEST_PROJECTS:-all projects}: $((SECONDS - t)) s"
JSON_OUT="$JSON_OUT" node -e '
  const r = require(require("path").resolve(process.env.JSON_OUT));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
' || true
exit $rc
