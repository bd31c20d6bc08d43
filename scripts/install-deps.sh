#!/usr/bin/env bash
# Installs what sinter builds and tests with, from Debian's packages (idempotent; skips the
# package manager when everything is already there).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang llvm libclang-rt-14-dev           # libFuzzer and the sanitizers' runtimes for fuzz targets
  googletest libgtest-dev libgmock-dev    # unit tests
  libbenchmark-dev                        # kernel microbenchmarks
  libcpp-httplib-dev nlohmann-json3-dev   # HTTP server and JSON
  libcli11-dev                            # command-line parsing
  libpcre2-dev libutf8proc-dev            # pre-tokenizer regexes, Unicode normalization
  python3 python3-jinja2                  # the chat-template reference renderer used by tests
  python3-jsonschema                      # the reference validator of the JSON-schema conformance test
  curl                                    # the server's client tests send what Ollama's docs send
  libboost-dev                            # test-only: Boost.Beast, for the differential HTTP fuzz target
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)

if ((${#missing[@]})); then
  as_root=()
  [[ $(id -u) -eq 0 ]] || as_root=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -q
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
