#!/usr/bin/env bash
# `npm test`: every test of the project — the vitest projects (unit, integration, e2e) and the fault
# suite (test/faults) — with the stack started once and the fault suite beside the vitest projects
# where their timing does not collide:
#   1. stack up (Redis, Kafka, Prometheus, Redis Cluster; also fetches the Kafka jars the fault suite needs
#      and builds the Java reference consumer's jar, examples/java-consumer)
#   2. in parallel: [vitest unit + integration (three files at a time), then integration-alone (one
#      at a time) beside integration-cluster (one at a time; the Cluster's files, which nothing else
#      uses)]  ||  [type-check, then next build]  ||  [fault cases that need no app (two at a time, then
#      the broker restart alone: test/faults/vitest.config.ts)]
#   3. vitest e2e with timing bounds: [ui.e2e (paint times)]  ||  [the others whose bounds hold
#      beside it (E2E_BOUNDS_BESIDE)], then the security files alone (E2E_ALONE_LAST)
#   4. in parallel: [the fault cases that run the built app (fuzz, access, 50-viewer load), then
#      e2e files that mostly wait (E2E_AFTER_FAULTS)]  ||  [more of those (E2E_BESIDE)]
# TEST_SERIAL=1 runs them one after another instead (scripts/test-vitest.sh, then scripts/test-faults.sh).
# At the end: what each phase cost, then ONE closing line `N passed, N failed` over every vitest
# report. Stops only what it started. Timing goes to test-results/ci-timing.json (`npm run bench`
# reads it as ci.wall_s); .ci/run passes what it spent before (apt-get, npm ci) in CI_PRE_PHASES.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$SECONDS
# The machine's CPU time (all processes: the tests, the stack, anything else), from /proc/stat: busy
# and total jiffies. At the end the run says how much of its cores' time was busy: a run whose cores
# were busy throughout is bound by the work, not by the order of its phases.
cpu_jiffies() { awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat 2>/dev/null || echo "0 0"; }
# busy_pct <busy0> <total0> <busy> <total>: the share of the cores' time that was busy between two cpu_jiffies readings.
busy_pct() { echo $(( $4 > $2 ? 100 * ($3 - $1) / ($4 - $2) : 0 )); }
read -r CPU_BUSY0 CPU_TOTAL0 <<< "$(cpu_jiffies)"
PHASES=()
PHASES_JSON=()
# How busy the cores were in each top-level step (the steps run one after another): a step whose
# cores idle is where running more beside it would shorten the run.
CPU_STEPS=()
CPU_STEPS_JSON=()
step_start() { read -r STEP_BUSY0 STEP_TOTAL0 <<< "$(cpu_jiffies)"; STEP_T0=$SECONDS; }
step_end() {
  local busy total pct
  read -r busy total <<< "$(cpu_jiffies)"
  pct=$(busy_pct "$STEP_BUSY0" "$STEP_TOTAL0" "$busy" "$total")
  CPU_STEPS+=("$(printf '%-58s %5d s, cores busy %3d %%' "$1" $((SECONDS - STEP_T0)) "$pct")")
  CPU_STEPS_JSON+=("{\"step\":\"$1\",\"s\":$((SECONDS - STEP_T0)),\"cpuBusyPct\":$pct}")
}
# mark <name> <seconds> [serial]: "serial" = counted in the serial sum (a phase that ran beside another is listed, not summed twice).
SERIAL_SUM=0
mark() {
  PHASES+=("$(printf '%-58s %5d s' "$1" "$2")")
  PHASES_JSON+=("{\"phase\":\"$1\",\"s\":$2}")
  if [ "${3:-serial}" = serial ]; then SERIAL_SUM=$((SERIAL_SUM + $2)); fi
}
# Phases .ci/run measured before `npm test` ("name=seconds;name=seconds"): part of the CI wall time.
PRE_S=0
if [ -n "${CI_PRE_PHASES:-}" ]; then
  IFS=';' read -r -a pre <<< "$CI_PRE_PHASES"
  for p in "${pre[@]}"; do mark "${p%%=*}" "${p##*=}"; PRE_S=$((PRE_S + ${p##*=})); done
fi

mkdir -p test-results/faults
# Cores busy every 10 s (test-results/ci-cpu.tsv: seconds since the start, busy %): where inside a step they idle.
cpu_sampler() {
  local b0 t0 b t
  read -r b0 t0 <<< "$(cpu_jiffies)"
  while sleep 10; do
    read -r b t <<< "$(cpu_jiffies)"
    printf '%d\t%d\n' $((SECONDS - T0)) "$(busy_pct "$b0" "$t0" "$b" "$t")"
    b0=$b t0=$t
  done
}
rm -f test-results/ci-*.json test-results/ci-bg-*seconds test-results/ci-build-seconds test-results/faults/ci-*.json test-results/faults/ci-*.jsonl
# Fault cases that start the built app (scripts/test-faults.sh builds it when missing: here npm test does).
APP_CASES=(test/faults/access.faults.test.ts test/faults/api-fuzz.faults.test.ts test/faults/load.faults.test.ts)
OTHER_CASES=()
for f in test/faults/*.faults.test.ts; do
  [[ " ${APP_CASES[*]} " == *" $f "* ]] || OTHER_CASES+=("$f")
done
# Browser test files that mostly wait and assert no latency (dev-server: generous timeouts for next
# dev's compile; newcomer: layout): two streams of them in phase 4, one beside the app fault cases
# and then beside the other (E2E_BESIDE), one after the app fault cases (E2E_AFTER_FAULTS). A third
# stream left the app fault cases (50-viewer load, fuzz) too little CPU: requests timed out.
# security-scans (~15 s, no browser): its one time bound (a forget dry run under 8 s, 0.4 s alone) has room to spare.
# smoke's real-mode app listens on 127.0.0.1:3000 (the port the stack's Prometheus scrapes), as ui.e2e's
# does in step 3: beside it the two apps met on that port and smoke read a page that was going away.
# deadman-alerts waits ~35 s for Prometheus' alerts (bounds of seconds at a 1 s scrape): after the
# app fault cases, not beside the 50-viewer load.
E2E_BESIDE=(e2e/embedded.e2e.test.ts e2e/one-count.e2e.test.ts e2e/act-on-it.e2e.test.ts e2e/alertmanager.e2e.test.ts e2e/fleet.e2e.test.ts e2e/key-actions-bound.e2e.test.ts e2e/not-measured.e2e.test.ts e2e/security-scans.e2e.test.ts)
E2E_AFTER_FAULTS=(e2e/ui-behaviour.e2e.test.ts e2e/dev-server.e2e.test.ts e2e/alerts.e2e.test.ts e2e/budget.e2e.test.ts e2e/memory-lost.e2e.test.ts e2e/runbook.e2e.test.ts e2e/newcomer.e2e.test.ts e2e/fleet-processes.e2e.test.ts e2e/deadman-alerts.e2e.test.ts e2e/smoke.e2e.test.ts)
# Browser files with timing bounds that hold beside ui.e2e's (its 10 s paint bound; each of these
# measures against a bound of its own, not against a quiet machine): on-call-faults (its own
# redis-server's answers < 1 ms); and the identity files, which mostly wait (a sign-in
# through a real OpenID Provider, proxy headers over HTTP): ui.e2e's step had ~90 s of this stream free.
E2E_BOUNDS_BESIDE=(e2e/on-call-faults.e2e.test.ts e2e/oidc.e2e.test.ts e2e/proxy-identity.e2e.test.ts)
# Alone, last in step 3: Redis PING p99 within 3 ms of a control (it failed at 3.86 ms with fault cases
# beside), and the exact count's share of Redis time under 10 % (0.103 beside ui.e2e).
E2E_ALONE_LAST=(e2e/security.e2e.test.ts e2e/security-boundaries.e2e.test.ts)
# Every other e2e file (ui.e2e, a new one too) runs in step 3 beside E2E_BOUNDS_BESIDE, nothing else beside.
E2E_ALONE=()
for f in e2e/*.e2e.test.ts; do
  [[ " ${E2E_BESIDE[*]} ${E2E_AFTER_FAULTS[*]} ${E2E_BOUNDS_BESIDE[*]} ${E2E_ALONE_LAST[*]} " == *" $f "* ]] || E2E_ALONE+=("$f")
done

# 1. The stack once; stopped at the end only if this run started it (as scripts/test-vitest.sh does).
COMPONENTS=(redis kafka prometheus redis-cluster java-consumer-jar) # the jar: built here, not in a timed test
pidfile() { if [ "$1" = redis-cluster ]; then echo ".stack/pids/redis-7000.pid"; else echo ".stack/pids/$1.pid"; fi; }
before=()
for c in "${COMPONENTS[@]}"; do [ -f "$(pidfile "$c")" ] && before+=("$c"); done
declare -A bg_pids=()
build_pid=""
stop_stack() {
  if [ -n "${sampler_pid:-}" ]; then kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=""; fi
  local p
  for p in "${bg_pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
  done
  bg_pids=()
  if [ -n "$build_pid" ] && kill -0 "$build_pid" 2>/dev/null; then kill -TERM "$build_pid" 2>/dev/null || true; wait "$build_pid" 2>/dev/null || true; fi
  local mine=()
  for c in "${COMPONENTS[@]}"; do
    if [ -f "$(pidfile "$c")" ] && [[ " ${before[*]:-} " != *" $c "* ]]; then mine+=("$c"); fi
  done
  if [ ${#mine[@]} -gt 0 ]; then bash scripts/stack.sh down "${mine[@]}" > test-results/ci-stack-down.log 2>&1 || true; fi
}
cleanup() {
  local rc=$?
  stop_stack
  exit "$rc"
}
summary() {
  local rc=$1
  stop_stack # before the closing line, so that it stays the last one
  echo
  echo "[ci] what each phase cost (wall):"
  for p in "${PHASES[@]}"; do echo "  $p"; done
  local wall=$((SECONDS - T0 + PRE_S))
  echo "  $(printf '%-58s %5d s' "total (wall)" "$wall")   (the same phases one after another: ${SERIAL_SUM} s)"
  local busy total hz cpu_s cores pct
  read -r busy total <<< "$(cpu_jiffies)"
  hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
  cores=$(nproc 2>/dev/null || echo 1)
  cpu_s=$(( (busy - CPU_BUSY0) / hz ))
  pct=$(busy_pct "$CPU_BUSY0" "$CPU_TOTAL0" "$busy" "$total")
  echo "  CPU busy (every process on the machine, after npm ci): ${cpu_s} s of ${cores} cores = ${pct} % of their time; no order of the phases finishes before ${cpu_s} / ${cores} = $((cpu_s / cores)) s"
  if [ ${#CPU_STEPS[@]} -gt 0 ]; then
    echo "[ci] how busy the cores were in each step:"
    for p in "${CPU_STEPS[@]}"; do echo "  $p"; done
    echo "  per minute (test-results/ci-cpu.tsv has every 10 s): $(awk '{ m = int(($1 - 1) / 60); s[m] += $2; n[m]++; if (m > last) last = m } END { for (i = 0; i <= last; i++) printf "%s%d", (i ? " " : ""), (n[i] ? s[i] / n[i] : 0) }' test-results/ci-cpu.tsv 2>/dev/null) %"
  fi
  # Read by `npm run bench` (ci.wall_s in bench-results.json and docs/BENCHMARKS.md).
  local IFS=,
  printf '{"wallS":%d,"serialSumS":%d,"cpuBusyS":%d,"cores":%d,"cpuBusyPct":%d,"mode":"%s","commit":"%s","finishedAt":"%s","phases":[%s],"steps":[%s]}\n' "$wall" "$SERIAL_SUM" "$cpu_s" "$cores" "$pct" \
    "$([ "${TEST_SERIAL:-${CI_SERIAL:-0}}" = 1 ] && echo serial || echo parallel)" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$(date -u +%FT%TZ)" "${PHASES_JSON[*]}" "${CPU_STEPS_JSON[*]:-}" > test-results/ci-timing.json || true
  unset IFS
  CI_RC=$rc node -e '
    const fs = require("fs");
    let passed = 0, failed = 0, skipped = 0, reports = 0; const failures = [];
    for (const f of process.argv.slice(1)) {
      if (!fs.existsSync(f)) continue;
      const r = JSON.parse(fs.readFileSync(f, "utf8"));
      passed += r.numPassedTests; failed += r.numFailedTests; skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0); reports++;
      const first = (s) => (String(s ?? "").split("\n").find((l) => l.trim()) ?? "").slice(0, 400);
      for (const file of r.testResults ?? []) {
        const name = require("path").relative(process.cwd(), file.name);
        const tests = (file.assertionResults ?? []).filter((t) => t.status === "failed");
        for (const t of tests) failures.push(`  ✗ ${name} > ${t.fullName}\n      ${first((t.failureMessages ?? [])[0])}`);
        // A hook, an import or the file itself failed: its tests count as skipped, the file as failed.
        if (file.status === "failed" && tests.length === 0) failures.push(`  ✗ ${name} (a hook or the file itself failed)\n      ${first(file.message)}`);
      }
    }
    if (failures.length) console.log(`[ci] what failed:\n${failures.join("\n")}`);
    else if (process.env.CI_RC !== "0") console.log("[ci] no test failed in the reports: see the log above (a step before vitest, or an error outside any test)");
    console.log(`[ci] ${reports} vitest reports (vitest projects + fault suite)`);
    console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
  ' test-results/ci-vitest*.json test-results/faults/ci-faults*.json || true
  exit "$rc"
}

if [ "${TEST_SERIAL:-${CI_SERIAL:-0}}" = 1 ]; then
  rc=0
  t=$SECONDS
  TEST_JSON=test-results/ci-vitest.json bash scripts/test-vitest.sh || rc=$?
  mark "vitest: stack, type-check, build, all projects" $((SECONDS - t))
  t=$SECONDS
  bash scripts/test-faults.sh --reporter=default --reporter=json --outputFile.json=test-results/faults/ci-faults.json || rc=$?
  mark "npm run test:faults (all cases)" $((SECONDS - t))
  summary "$rc"
fi

trap cleanup EXIT INT TERM
cpu_sampler > test-results/ci-cpu.tsv &
sampler_pid=$!
t=$SECONDS
bash scripts/stack.sh up "${COMPONENTS[@]}"
mark "stack up" $((SECONDS - t))

rc=0
# beside <prefix> <command…>: runs the command in the background, its output prefixed, its own wall
# time kept for end_beside; its pid in bg_pids (stop_stack stops it on an early exit).
beside() {
  local prefix=$1
  shift
  (
    s=$SECONDS
    rc=0
    "$@" 2>&1 | sed -u "s/^/[$prefix] /" || rc=$?
    echo $((SECONDS - s)) > "test-results/ci-bg-$prefix-seconds"
    exit $rc
  ) &
  bg_pids[$prefix]=$!
}
# end_beside <prefix> <label> [<t>]: waits for it, marks its own time (and, given <t>, the time since
# <t>, when all beside it are done), keeps its failure in rc.
end_beside() {
  local b_rc=0
  wait "${bg_pids[$1]}" || b_rc=$?
  unset "bg_pids[$1]"
  mark "beside it: $2 (own time)" "$(cat "test-results/ci-bg-$1-seconds" 2>/dev/null || echo 0)"
  rm -f "test-results/ci-bg-$1-seconds"
  if [ -n "${3:-}" ]; then mark "  (all done after)" $((SECONDS - $3)) beside; fi
  [ "$b_rc" = 0 ] || rc=$b_rc
}

step_start
# 2. The fault cases without the app (own broker on 19092, own redis-servers, workers) beside the
#    unit and integration projects (shared stack on the default ports), and beside both the
#    type-check and the next build that only the later phases need (build_pid; a failure fails the run).
t=$SECONDS
beside bg env FAULTS_BUILD=skip FAULTS_RESULTS_FILE=test-results/faults/ci-results-1.jsonl \
  bash scripts/test-faults.sh --reporter=default --reporter=json --outputFile.json=test-results/faults/ci-faults-1.json "${OTHER_CASES[@]}"
(
  s=$SECONDS
  b_rc=0
  bash scripts/test-build.sh || b_rc=$?
  echo $((SECONDS - s)) > test-results/ci-build-seconds
  exit $b_rc
) &
build_pid=$!
TEST_PROJECTS=unit,integration TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-1.json bash scripts/test-vitest.sh || rc=$?
mark "vitest unit, integration" $((SECONDS - t))
t2=$SECONDS
beside cluster env TEST_PROJECTS=integration-cluster TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-8.json bash scripts/test-vitest.sh
TEST_PROJECTS=integration-alone TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-9.json bash scripts/test-vitest.sh || rc=$?
mark "then vitest integration-alone" $((SECONDS - t2))
end_beside cluster "vitest integration-cluster"
build_rc=0
wait "$build_pid" || build_rc=$?
build_pid=""
mark "beside it: type-check + next build (own time)" "$(cat test-results/ci-build-seconds 2>/dev/null || echo 0)" beside
end_beside bg "fault cases without the app" "$t"
step_end "2: unit, integration ‖ build ‖ faults without the app"
if [ "$build_rc" != 0 ]; then
  echo "[ci] the type-check or next build failed: the browser tests and the app fault cases need the build"
  summary 1
fi

# 3. Browser tests with timing bounds: ui.e2e (and any new file) beside the ones whose bounds hold
#    beside it, then the PING p99 test alone.
step_start
t=$SECONDS
beside e2eb env TEST_PROJECTS=e2e TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-6.json bash scripts/test-vitest.sh "${E2E_BOUNDS_BESIDE[@]}"
TEST_PROJECTS=e2e TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-2.json bash scripts/test-vitest.sh "${E2E_ALONE[@]}" || rc=$?
mark "vitest e2e with timing bounds (${#E2E_ALONE[@]} files)" $((SECONDS - t))
end_beside e2eb "vitest e2e with bounds of their own (${#E2E_BOUNDS_BESIDE[@]} files)" "$t"
t2=$SECONDS
TEST_PROJECTS=e2e TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-7.json bash scripts/test-vitest.sh "${E2E_ALONE_LAST[@]}" || rc=$?
mark "then vitest e2e alone (${#E2E_ALONE_LAST[@]} files)" $((SECONDS - t2))
step_end "3: e2e with timing bounds"

# 4. The fault cases that run the built app (own redis-servers, broker and ports; they assert no
#    latency) beside two streams of the browser tests that mostly wait (for the demo's first
#    duplicate, Prometheus' rule evaluations) and assert no latency either.
step_start
t=$SECONDS
beside e2e env TEST_PROJECTS=e2e TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-3.json bash scripts/test-vitest.sh "${E2E_BESIDE[@]}"
FAULTS_BUILD=skip FAULTS_RESULTS_FILE=test-results/faults/ci-results-2.jsonl \
  bash scripts/test-faults.sh --reporter=default --reporter=json --outputFile.json=test-results/faults/ci-faults-2.json "${APP_CASES[@]}" || rc=$?
mark "fault cases with the app (fuzz, access, load)" $((SECONDS - t))
t2=$SECONDS
TEST_PROJECTS=e2e TEST_SKIP_BUILD=1 TEST_JSON=test-results/ci-vitest-4.json bash scripts/test-vitest.sh "${E2E_AFTER_FAULTS[@]}" || rc=$?
mark "then vitest e2e that waits (${#E2E_AFTER_FAULTS[@]} files)" $((SECONDS - t2))
end_beside e2e "vitest e2e that waits (${#E2E_BESIDE[@]} files)" "$t"
step_end "4: app fault cases, e2e that waits ‖ e2e that waits"

summary "$rc"
