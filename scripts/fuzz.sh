#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for N seconds (default 20) over its
# seed corpus. A crash, leak or sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
# SINTER_FUZZ_BUILD: a build folder already configured with -DSINTER_FUZZ=ON (scripts/test.sh's
# sanitizer build); otherwise build-fuzz, configured here.
build=${SINTER_FUZZ_BUILD:-build-fuzz}
if [[ -z ${SINTER_FUZZ_BUILD:-} ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSINTER_FUZZ=ON -DSINTER_TESTS=OFF -DSINTER_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target fuzz_targets
shopt -s nullglob
for target in "$build"/bin/fuzz_*; do
  name=$(basename "$target")
  corpus=$(mktemp -d)
  seeds=fuzz/corpus/${name#fuzz_}
  [[ -d $seeds ]] && cp -r "$seeds"/. "$corpus"/
  echo "-- $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
    "$corpus" 2>&1 | tail -n 3
  rm -rf "$corpus"
done
