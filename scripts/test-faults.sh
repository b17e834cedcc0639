#!/usr/bin/env bash
# `npm run test:faults`: the reliability and security suite (test/faults/*.faults.test.ts).
# Every case starts its own redis-server / Kafka broker (127.0.0.1:19092) / consumer workers / app
# and stops them by pid; this script needs the Kafka jars (`npm run stack:up` fetches them) and a
# built app (`npx next build`, done here when .next/BUILD_ID is missing or FAULTS_BUILD=1). At the
# end it prints one line per case (published, processed, lost, duplicate side effects, DLQ, time)
# and stops any process a case recorded under .stack/faults/pids and did not stop itself.
#   npm run test:faults                        # all cases
#   npm run test:faults -- test/faults/poison  # a subset (vitest file filter)
#   FAULTS_SCALE=0.1 npm run test:faults       # 10% of the issue's message counts (a quick look only)
#   FAULTS_BUILD=skip                          # never build (.ci/run: the app cases run after npm test built it)
#   FAULTS_RESULTS_FILE=path.jsonl             # where the cases' rows go (default test-results/faults/results.jsonl)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PIDS="$ROOT/.stack/faults/pids"
mkdir -p "$PIDS" test-results/faults

stop_recorded() {
  local f pid
  for f in "$PIDS"/*; do
    [ -e "$f" ] || continue
    pid=${f##*.}
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      echo "[faults] stopping leftover ${f##*/} (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
  done
  local bp="$ROOT/.stack/faults/kafka/broker.pid"
  if [ -f "$bp" ]; then
    pid=$(cat "$bp")
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka.Kafka .*faults'; then
      echo "[faults] stopping leftover fault broker (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$bp"
  fi
}
trap 'rc=$?; stop_recorded; exit $rc' EXIT INT TERM

stop_recorded
if [ ! -f .stack/kafka-libs/.complete ]; then
  # The jars only (what `npm run stack:up` fetches on first use), without starting the shared broker.
  echo "[faults] fetching the Kafka broker jars from Maven Central into .stack/kafka-libs"
  command -v mvn >/dev/null && command -v java >/dev/null || { echo "[faults] error: needs maven and Java 17 (apt-get install maven openjdk-17-jre-headless), or run npm run stack:up once"; exit 1; }
  mkdir -p .stack/logs
  mvn -q -B -f infra/kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$ROOT/.stack/kafka-libs" > .stack/logs/mvn-faults.log 2>&1 \
    || { echo "[faults] error: mvn could not fetch Kafka: see .stack/logs/mvn-faults.log"; exit 1; }
  touch .stack/kafka-libs/.complete
fi
if [ "${FAULTS_BUILD:-0}" != skip ] && { [ ! -f .next/BUILD_ID ] || [ "${FAULTS_BUILD:-0}" = 1 ]; }; then
  echo "[faults] next build (the fuzz, access and load cases run the built app)"
  npx next build > test-results/faults/next-build.log 2>&1 || { tail -n 40 test-results/faults/next-build.log; exit 1; }
fi

start=$SECONDS
set +e
npx vitest run --config test/faults/vitest.config.ts "$@"
rc=$?
set -e
echo
echo "[faults] per case (published, processed, lost, duplicate side effects, re-sends absorbed by the provider key, DLQ, time):"
RESULTS=${FAULTS_RESULTS_FILE:-test-results/faults/results.jsonl}
if [ -f "$RESULTS" ]; then
  RESULTS="$RESULTS" node -e '
    const rows = require("fs").readFileSync(process.env.RESULTS, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const pad = (s, n) => String(s).padEnd(n);
    console.log(pad("case", 44) + pad("published", 11) + pad("processed", 11) + pad("lost", 6) + pad("dup", 5) + pad("absorbed", 10) + pad("DLQ", 6) + "time");
    for (const r of rows) {
      console.log(pad(r.case, 44) + pad(r.published, 11) + pad(r.processed, 11) + pad(r.lost, 6) + pad(r.duplicateSideEffects, 5) + pad(r.absorbed ?? "-", 10) + pad(r.dlq, 6) + r.seconds.toFixed(1) + " s");
      if (r.note) console.log("    " + r.note);
    }
  '
fi
echo "[faults] suite time $((SECONDS - start)) s, exit $rc"
exit $rc
