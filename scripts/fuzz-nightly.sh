#!/usr/bin/env bash
# Every fuzz target for N minutes each (default 30) over a persistent corpus outside the
# repository (default ~/.cache/sinter-fuzz, or the folder given), which grows run after run; a
# crash is kept beside its target's corpus as <dir>/<target>-crash-*, and each run's log as
# <dir>/<target>.log. Not run by CI: with 10 targets it takes 5 hours.
#   scripts/fuzz-nightly.sh [minutes] [corpus folder]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
corpus=${2:-${SINTER_FUZZ_CORPUS_DIR:-$HOME/.cache/sinter-fuzz}}
mkdir -p "$corpus"
SINTER_FUZZ_CORPUS_DIR=$(cd "$corpus" && pwd) SINTER_FUZZ_TARGET_SECONDS="" scripts/fuzz.sh $((minutes * 60))
