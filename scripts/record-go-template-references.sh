#!/usr/bin/env bash
# Records the expected renderings of the Go-template corpus with Go's own text/template, set up as
# Ollama sets it up (tests/chat/gotemplate_reference/main.go). Needs Go (Debian: golang-go); CI
# does not run this: it checks sinter against the recorded file.
#   scripts/record-go-template-references.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=tests/chat/data/gotemplate
export GOCACHE="${GOCACHE:-$(mktemp -d)}" GO111MODULE=off GOFLAGS=
go version
# The reference's types live in package main; Ollama's in packages template and api.
go run tests/chat/gotemplate_reference/main.go "$data/templates" "$data/conversations.json" |
  sed -e 's/main\.template/template.template/g' \
      -e 's/main\.\(ToolProperty\|PropertyType\|ImageData\|ToolPropertiesMap\)/api.\1/g' > "$data/expected.json.tmp"
mv "$data/expected.json.tmp" "$data/expected.json"
echo "wrote $data/expected.json ($(grep -c '"template"' "$data/expected.json") cases)"
