#!/usr/bin/env bash
# The demo that `make demo` runs: train a small SWAX hybrid (mLSTM + sliding-window attention) with
# stochastic window sizes on built-in synthetic passkey data at 512 tokens, then measure passkey recall
# at the training length and beyond it (up to 8x). Everything is generated on the fly from seeds; nothing
# is downloaded. About 5-10 minutes on 2 cores.
#
#   bash scripts/demo.sh [BUILD_DIR] [RUN_DIR]
#   DEMO_STEPS=N  overrides the number of training steps (default: the config's).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
run_dir=${2:-runs/demo}
swarmt="$build_dir/swarmt"
[ -x "$swarmt" ] || { echo "demo: $swarmt not found; run 'make build' first" >&2; exit 2; }

steps_arg=()
if [ -n "${DEMO_STEPS:-}" ]; then steps_arg=(--max-steps "$DEMO_STEPS"); fi

# A finished run is kept; an interrupted one is continued from its latest checkpoint.
resume_arg=()
if [ -d "$run_dir/checkpoints" ]; then resume_arg=(--resume); fi

echo "== 1/2  training a SWAX model (configs/train/demo.json) into $run_dir"
"$swarmt" train --config configs/train/demo.json --out "$run_dir" "${steps_arg[@]}" "${resume_arg[@]}"

echo
echo "== 2/2  passkey recall by context length (trained on 512 tokens; window at inference: 128)"
"$swarmt" eval passkey --model "$run_dir" --lengths 512,1k,2k,4k --samples 10 --out "$run_dir/eval-passkey"
echo
cat "$run_dir/eval-passkey/summary.md"
echo
echo "demo: results in $run_dir (metrics.jsonl, eval-passkey/summary.md and plots)"
