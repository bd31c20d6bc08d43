#!/usr/bin/env bash
# Code above src/backend never touches tensor bytes: it writes inputs and reads results with
# tensor_set / tensor_get (src/backend/buffer.h), so that a tensor may live in memory the host
# cannot address. This check fails on any use of a Tensor's `data` member, `data_as<>()` or
# `row()` in the layers above the backend. Other structs with a `data` member (GGUF tensor infos
# and metadata values, epoll events, PCRE2 scratch) are told apart by the names they go by.
set -euo pipefail
cd "$(dirname "$0")/.."
layers=(src/memory src/model src/runtime src/sample src/chat src/tokenizer src/server src/cli include)
pattern='(->|\.)data\b(?!\()|data_as<|(->|\.)row\('
not_tensors='\b(info|value|event|events\[i\]|scratch|tokens)(->|\.)data\b'
hits=$(grep -rnP "$pattern" "${layers[@]}" --include='*.cpp' --include='*.h' | grep -vP "$not_tensors" || true)
if [[ -n "$hits" ]]; then
  echo "tensor bytes touched above src/backend (use tensor_set / tensor_get):" >&2
  echo "$hits" >&2
  exit 1
fi
echo "no tensor bytes touched above src/backend"
