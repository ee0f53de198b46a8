#!/usr/bin/env bash
# Data-parallel training throughput (a benchmark, not a test): the same SWAX training, same global batch,
# run as one process with every core, one process with one thread, and N processes through the built-in
# launcher (`--nproc-per-node N`, which gives each worker cores/N threads). The three runs follow each
# other in one invocation, so their ratios are comparable even on a shared machine. Rates are the
# steady-state window that `swarmt train` logs (steps 21-30; the first 20 steps include start-up).
#
#   bash scripts/bench_data_parallel.sh [BUILD_DIR] [OUT_DIR] [NPROC]
#   NPROC defaults to the number of cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
out=${2:-$build_dir/bench_data_parallel}
nproc=${3:-$(nproc)}
swarmt="$build_dir/swarmt"
[ -x "$swarmt" ] || { echo "bench_data_parallel: $swarmt not found; run 'make build' first" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out/results.jsonl"

python3 - "$out/train.json" <<'PY'
import json, sys
model = json.load(open("configs/swax-tiny.json"))
json.dump({"model": model, "sequence_length": 512,
           "data": {"train": {"type": "synthetic", "tasks": [{"task": "passkey"}, {"task": "essay"}]}},
           "window_schedule": {"type": "stochastic", "short_window": 16, "long_window": 64, "p_short": 0.5},
           "training": {"max_steps": 30, "batch_size": 16, "log_every": 10}},
          open(sys.argv[1], "w"))
PY

rate_of() {  # tokens/s of the last logged window (steps 21-30)
  tail -n 1 "$1/metrics.jsonl" | python3 -c "import json,sys; print(round(json.loads(sys.stdin.read())['tokens_per_s']))"
}

echo "== SWAX training (configs/swax-tiny.json), 16 rows x 512 tokens per step, 30 steps"
run() {  # name, then swarmt's arguments before `train`, then train's extra arguments
  local name=$1 global=$2 extra=$3
  rm -rf "$out/$name"
  # shellcheck disable=SC2086
  "$swarmt" -q $global train --config "$out/train.json" --out "$out/$name" $extra > /dev/null
  local rate
  rate=$(rate_of "$out/$name")
  echo "$name: $rate tokens/s"
  echo "{\"run\": \"$name\", \"tokens_per_s\": $rate}" >> "$out/results.jsonl"
}
run "1-process-$(nproc)-threads" "" ""
run "1-process-1-thread" "--threads 1" ""
run "$nproc-processes" "" "--nproc-per-node $nproc"

python3 - "$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = rows[0]["tokens_per_s"]
for r in rows:
    print(f'{r["run"]}: {r["tokens_per_s"] / base:.2f}x the first')
PY
