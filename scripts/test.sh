#!/usr/bin/env bash
# The whole test suite, from a clean checkout with ../shared beside it:
#   1. dependencies (Debian packages; npm packages for the test references),
#   2. a Release build and every test, differential tests against llama.cpp included,
#   3. a clang ASan/UBSan build and the unit tests under it,
#   4. the libFuzzer targets of that build, each run briefly over its seed corpus (the HTTP ones
#      for a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/install-deps.sh
scripts/install-test-references.sh
# Every reference the tests compare with is installed now: a test that finds one missing fails
# instead of skipping.
export SINTER_REQUIRE_REFERENCES=1

echo "== release build and all tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 900

echo "== sanitizers (ASan + UBSan, clang) over the unit tests; the same build makes the fuzz targets"
# One clang build serves both, instead of a GCC sanitizer build and a separate fuzz build: every
# library is instrumented for ASan/UBSan and for libFuzzer's coverage (fuzzer-no-link); the unit
# tests link it as it is, each fuzz target adds libFuzzer's main. -O1 with line tables only:
# sanitizer reports keep file:line stacks at about half the build time of -O2 -g on 2 cores;
# assertions stay on. The tests' own files stay at -O1 here too: at -O0 the linker may keep a
# test file's unoptimized copy of an inline function that library code calls (measured: the
# template engine's budget tests 5x slower, past their 10 s limits).
CC=clang CXX=clang++ cmake -S . -B build-sanitizers -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSINTER_SANITIZE=ON \
  -DSINTER_FUZZ=ON -DSINTER_BENCHMARKS=OFF -DSINTER_SLOW_TESTS=OFF >/dev/null
cmake --build build-sanitizers -j "$jobs"
# allocator_may_return_null: allocation failures return null (sinter reports them) instead of aborting.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-sanitizers --output-on-failure -j "$jobs" -L unit -LE slow --timeout 900

echo "== fuzz targets (libFuzzer), each briefly over its seed corpus"
# The HTTP targets and the whole transport parse what any client sends, so they get longer (60 s
# each), the whole request path 30 s (each input is a generation); the others keep
# SINTER_FUZZ_SECONDS. scripts/fuzz-nightly.sh runs every target for half an hour.
SINTER_FUZZ_BUILD=build-sanitizers \
  SINTER_FUZZ_TARGET_SECONDS=${SINTER_FUZZ_TARGET_SECONDS-"fuzz_http=60 fuzz_http_diff=60 fuzz_transport=60 fuzz_server=30"} \
  scripts/fuzz.sh "${SINTER_FUZZ_SECONDS:-12}"
echo "== all tests passed"
