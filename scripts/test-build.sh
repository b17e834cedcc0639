#!/usr/bin/env bash
# The format check (prettier, .prettierrc.json: one style, 120 columns; `npm run format` applies it),
# the type-check, then the `next build` the browser tests and the app fault cases run (its own type
# check skipped: tsc just checked the same files). Called by scripts/test-vitest.sh before the vitest
# projects, and by scripts/test-all.sh beside them. The build's output goes to test-results/next-build.log.
# One after the other: measured on this 2-core VM, tsc beside next build took 35 s against 9 + 21 s
# in sequence (warm caches), so the parallel form was not kept.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-results
t=$SECONDS
echo "[build] format check"
npx prettier --check "**/*.{ts,tsx,js,mjs}" --log-level warn || { echo "[build] files not in the house style: npm run format"; exit 1; }
echo "[build] format check: $((SECONDS - t)) s; type-check"
npx tsc --noEmit -p .
echo "[build] type-check: $((SECONDS - t)) s; next build (for the browser tests)"
DEDUP_HEALTH_TYPECHECKED=1 npx next build > test-results/next-build.log 2>&1 || { tail -n 40 test-results/next-build.log; echo "[build] next build failed"; exit 1; }
echo "[build] type-check + next build: $((SECONDS - t)) s"
