#!/usr/bin/env bash
# Replays the curl examples of Ollama's API documentation (docs/api.md) against `sinter serve`,
# the model names replaced by the one served. Every example of a route and feature sinter
# implements must answer 200 with well-formed JSON (NDJSON when streamed); the examples of
# features sinter does not have (suffix, format, images, tools) must be refused with a 400 that
# says so, never a 5xx.
#
#   scripts/replay-ollama-doc-examples.sh [MODEL.gguf]     (default ../shared/models/stories260K.gguf)
set -euo pipefail
cd "$(dirname "$0")/.."
model_path=${1:-../shared/models/stories260K.gguf}
model=$(basename "$model_path" .gguf)
sinter=${SINTER_BIN:-build/bin/sinter}

log=$(mktemp)
"$sinter" serve -m "$model_path" --port 0 -t 2 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do
  url=$(grep -o 'http://[^ ]*' "$log" || true)
  [[ -n $url ]] && curl -sf "$url/health" >/dev/null && break
  sleep 0.1
done
[[ -n ${url:-} ]] || { echo "sinter serve did not start:"; cat "$log"; exit 1; }

passed=0
failed=0
# example NAME EXPECTED_STATUS CURL_ARGS... : runs curl as the docs write it (`-d` bodies) and
# checks the status and that every line of the answer is JSON.
example() {
  local name=$1 expected=$2
  shift 2
  local out status
  out=$(curl -s -w '\n%{http_code}' "$@")
  status=${out##*$'\n'}
  local body=${out%$'\n'*}
  local json_ok=1
  python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin.read().splitlines() if l.strip()]' \
    <<<"$body" 2>/dev/null || json_ok=0
  if [[ $status == "$expected" && $json_ok == 1 ]]; then
    passed=$((passed + 1))
    printf 'ok    %-44s %s\n' "$name" "$status"
  else
    failed=$((failed + 1))
    printf 'FAIL  %-44s %s (expected %s) %s\n' "$name" "$status" "$expected" "${body:0:200}"
  fi
}
body() { sed "s/\"model\": \"[^\"]*\"/\"model\": \"$model\"/"; }
post() { local route=$1; shift; example "$@" "$url$route" -d "$(body)"; }

# Generate a completion
post /api/generate "generate (streaming)" 200 <<'EOF'
{"model": "llama3.2", "prompt": "Why is the sky blue?"}
EOF
post /api/generate "generate (no streaming)" 200 <<'EOF'
{"model": "llama3.2", "prompt": "Why is the sky blue?", "stream": false}
EOF
post /api/generate "generate with suffix (not supported)" 400 <<'EOF'
{"model": "codellama:code", "prompt": "def compute_gcd(a, b):", "suffix": "    return result", "options": {"temperature": 0}, "stream": false}
EOF
post /api/generate "generate with format schema (not supported)" 400 <<'EOF'
{"model": "llama3.1:8b", "prompt": "Ollama is 22 years old and is busy saving the world. Respond using JSON", "stream": false, "format": {"type": "object", "properties": {"age": {"type": "integer"}, "available": {"type": "boolean"}}, "required": ["age", "available"]}}
EOF
post /api/generate "generate in JSON mode (not supported)" 400 <<'EOF'
{"model": "llama3.2", "prompt": "What color is the sky at different times of the day? Respond using JSON", "format": "json", "stream": false}
EOF
post /api/generate "generate with images (not supported)" 400 <<'EOF'
{"model": "llava", "prompt": "What is in this picture?", "stream": false, "images": ["iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="]}
EOF
post /api/generate "generate raw" 200 <<'EOF'
{"model": "mistral", "prompt": "[INST] why is the sky blue? [/INST]", "raw": true, "stream": false}
EOF
post /api/generate "generate reproducible (seed)" 200 <<'EOF'
{"model": "mistral", "prompt": "Why is the sky blue?", "options": {"seed": 123}}
EOF
post /api/generate "generate with every option" 200 <<'EOF'
{"model": "llama3.2", "prompt": "Why is the sky blue?", "stream": false, "options": {"num_keep": 5, "seed": 42, "num_predict": 100, "draft_num_predict": 4, "top_k": 20, "top_p": 0.9, "min_p": 0.0, "typical_p": 0.7, "repeat_last_n": 33, "temperature": 0.8, "repeat_penalty": 1.2, "presence_penalty": 1.5, "frequency_penalty": 1.0, "penalize_newline": true, "stop": ["\n", "user:"], "numa": false, "num_ctx": 1024, "num_batch": 2, "num_gpu": 1, "main_gpu": 0, "use_mmap": true, "num_thread": 8}}
EOF
post /api/generate "load a model" 200 <<'EOF'
{"model": "llama3.2"}
EOF
post /api/generate "unload a model" 200 <<'EOF'
{"model": "llama3.2", "keep_alive": 0}
EOF

# Generate a chat completion
post /api/chat "chat (streaming)" 200 <<'EOF'
{"model": "llama3.2", "messages": [{"role": "user", "content": "why is the sky blue?"}]}
EOF
post /api/chat "chat with tools (not supported)" 400 <<'EOF'
{"model": "llama3.2", "messages": [{"role": "user", "content": "What is the weather today in Paris?"}], "stream": true, "tools": [{"type": "function", "function": {"name": "get_current_weather", "description": "Get the current weather for a location", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the weather for, e.g. San Francisco, CA"}, "format": {"type": "string", "description": "The format to return the weather in, e.g. 'celsius' or 'fahrenheit'", "enum": ["celsius", "fahrenheit"]}}, "required": ["location", "format"]}}}]}
EOF
post /api/chat "chat (no streaming)" 200 <<'EOF'
{"model": "llama3.2", "messages": [{"role": "user", "content": "why is the sky blue?"}], "stream": false}
EOF
post /api/chat "chat with format schema (not supported)" 400 <<'EOF'
{"model": "llama3.1", "messages": [{"role": "user", "content": "Ollama is 22 years old and busy saving the world. Return a JSON object with the age and availability."}], "stream": false, "format": {"type": "object", "properties": {"age": {"type": "integer"}, "available": {"type": "boolean"}}, "required": ["age", "available"]}, "options": {"temperature": 0}}
EOF
post /api/chat "chat with history" 200 <<'EOF'
{"model": "llama3.2", "messages": [{"role": "user", "content": "why is the sky blue?"}, {"role": "assistant", "content": "due to rayleigh scattering."}, {"role": "user", "content": "how is that different than mie scattering?"}]}
EOF
post /api/chat "chat with images (not supported)" 400 <<'EOF'
{"model": "llava", "messages": [{"role": "user", "content": "what is in this image?", "images": ["iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="]}]}
EOF
post /api/chat "chat reproducible (seed)" 200 <<'EOF'
{"model": "llama3.2", "messages": [{"role": "user", "content": "Hello!"}], "options": {"seed": 101, "temperature": 0}}
EOF
post /api/chat "load a model (chat)" 200 <<'EOF'
{"model": "llama3.2", "messages": []}
EOF
post /api/chat "unload a model (chat)" 200 <<'EOF'
{"model": "llama3.2", "messages": [], "keep_alive": 0}
EOF

# Models and version
example "list local models" 200 "$url/api/tags"
post /api/show "show model information" 200 <<'EOF'
{"model": "llama3.2"}
EOF
example "list running models" 200 "$url/api/ps"
example "version" 200 "$url/api/version"

echo "$passed passed, $failed failed"
((failed == 0))
