#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for N seconds (default 20) over its
# seed corpus. A crash, leak or sanitizer report fails the run (after every target has run).
#
#   SINTER_FUZZ_TARGET_SECONDS="fuzz_http=60 fuzz_http_diff=60"  seconds for these targets
#                                 instead of N (scripts/test.sh gives the HTTP targets longer)
#   SINTER_FUZZ_CORPUS_DIR=dir   a persistent corpus, dir/<target>, seeded from fuzz/corpus/ and
#                                 kept between runs, crashes beside it (scripts/fuzz-nightly.sh);
#                                 otherwise a temporary copy of the seeds, crashes in the cwd
#   SINTER_FUZZ_TARGETS="fuzz_http fuzz_http_diff"  build and run these only (default: all)
#   SINTER_FUZZ_BUILD=dir        a build folder already configured with -DSINTER_FUZZ=ON
#                                 (scripts/test.sh's sanitizer build); otherwise build-fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}

declare -A target_seconds=()
for pair in ${SINTER_FUZZ_TARGET_SECONDS:-}; do
  target_seconds[${pair%%=*}]=${pair#*=}
done

build=${SINTER_FUZZ_BUILD:-build-fuzz}
if [[ -z ${SINTER_FUZZ_BUILD:-} ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSINTER_FUZZ=ON -DSINTER_TESTS=OFF -DSINTER_BENCHMARKS=OFF >/dev/null
fi
read -ra names <<<"${SINTER_FUZZ_TARGETS:-}"
cmake --build "$build" -j "$(nproc)" --target "${names[@]:-fuzz_targets}"
if ((${#names[@]} == 0)); then
  shopt -s nullglob
  for target in "$build"/bin/fuzz_*; do names+=("$(basename "$target")"); done
fi

failed=()
for name in "${names[@]}"; do
  target=$build/bin/$name
  seeds=fuzz/corpus/${name#fuzz_}
  if [[ -n ${SINTER_FUZZ_CORPUS_DIR:-} ]]; then
    corpus=$SINTER_FUZZ_CORPUS_DIR/$name
    artifacts=$SINTER_FUZZ_CORPUS_DIR/$name-
    mkdir -p "$corpus"
  else
    corpus=$(mktemp -d)
    artifacts=./
  fi
  [[ -d $seeds ]] && cp -rn "$seeds"/. "$corpus"/
  run_seconds=${target_seconds[$name]:-$seconds}
  options=(-max_total_time="$run_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$artifacts")
  dict=fuzz/dict/${name#fuzz_}.dict  # the words of the format, for targets that have one
  [[ -f $dict ]] && options+=(-dict="$dict")
  echo "-- $name for ${run_seconds}s"
  if ! "$target" "${options[@]}" "$corpus" >"$corpus.log" 2>&1; then
    failed+=("$name")
  fi
  # The last coverage line and the executions, or the report that stopped it.
  grep -E '^#[0-9]+' "$corpus.log" | tail -n 1 || true
  grep -E 'number_of_executed_units|ERROR|SUMMARY|disagree|Test unit written' "$corpus.log" || true
  [[ -n ${SINTER_FUZZ_CORPUS_DIR:-} ]] || rm -rf "$corpus" "$corpus.log"
done
if ((${#failed[@]})); then
  echo "fuzz targets that failed: ${failed[*]}" >&2
  exit 1
fi
