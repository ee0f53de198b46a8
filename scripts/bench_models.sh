#!/usr/bin/env bash
# Model-level benchmarks (not tests): training tokens/s of the tiny SWAX config in fp32 and bf16, and
# generation speed plus peak RSS at growing contexts for a SWAX model versus a full-attention model of the
# same size. Every number comes from swarmt's own output (`train` summary, `generate --stats`); each
# measurement is its own process, so peak RSS is that run's.
#
#   bash scripts/bench_models.sh [BUILD_DIR] [OUT_DIR] [CONTEXTS]
#   CONTEXTS defaults to "1024 16384 131072"; FULL_MAX (default 16384) caps the full-attention model's
#   contexts, whose prefill is quadratic (about 10 minutes at 128k on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
out=${2:-$build_dir/bench_models}
contexts=${3:-"1024 16384 131072"}
full_max=${FULL_MAX:-16384}
swarmt="$build_dir/swarmt"
[ -x "$swarmt" ] || { echo "bench_models: $swarmt not found; run 'make build' first" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out/results.jsonl"

field() { python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

echo "== training tokens/s, configs/swax-tiny.json, 512 tokens x 8 rows, 30 steps"
for dtype in fp32 bf16; do
  bf16=false; [ "$dtype" = bf16 ] && bf16=true
  python3 - "$out/train-$dtype.json" "$bf16" <<'PY'
import json, sys
model = json.load(open("configs/swax-tiny.json"))
json.dump({"model": model, "sequence_length": 512,
           "data": {"train": {"type": "synthetic", "tasks": [{"task": "passkey"}, {"task": "essay"}]}},
           "window_schedule": {"type": "stochastic", "short_window": 16, "long_window": 64, "p_short": 0.5},
           "training": {"max_steps": 30, "batch_size": 8, "bf16": sys.argv[2] == "true", "log_every": 10}},
          open(sys.argv[1], "w"))
PY
  rm -rf "$out/train-$dtype"
  summary=$("$swarmt" -q train --config "$out/train-$dtype.json" --out "$out/train-$dtype")
  # Steady-state rate: the last logged window (steps 21-30), not the start-up.
  rate=$(tail -n 2 "$out/train-$dtype/metrics.jsonl" | head -n 1 | field tokens_per_s)
  echo "train $dtype: $rate tokens/s (whole run: $(echo "$summary" | field tokens_per_s))"
  echo "{\"bench\": \"train\", \"dtype\": \"$dtype\", \"tokens_per_s\": $rate}" >> "$out/results.jsonl"
done

echo "== generation: SWAX (configs/swax-tiny.json) vs full attention of the same size"
python3 - "$out/full-attention.json" <<'PY'
import json, sys
c = json.load(open("configs/swax-tiny.json"))
c["layer_pattern"] = "A"  # every block full attention; everything else as the SWAX model
json.dump(c, open(sys.argv[1], "w"))
PY
rm -rf "$out/swax" "$out/full"
"$swarmt" -q model init configs/swax-tiny.json --out "$out/swax" > /dev/null
"$swarmt" -q model init "$out/full-attention.json" --out "$out/full" > /dev/null
for n in $contexts; do
  # Prompt of n bytes (the byte tokenizer: n tokens + bos).
  python3 -c "import sys; t='The quick brown fox jumps over the lazy dog. '; n=int(sys.argv[1]); print((t*(n//len(t)+1))[:n-1], end='')" "$n" > "$out/prompt-$n.txt"
  for model in swax full; do
    if [ "$model" = full ] && [ "$n" -gt "$full_max" ]; then echo "skip full attention at $n (FULL_MAX=$full_max)"; continue; fi
    stats=$("$swarmt" -q generate --model "$out/$model" --prompt-file "$out/prompt-$n.txt" -n 64 --ignore-eos --stats 2>&1 >/dev/null | tail -n 1)
    echo "$model context $n: $stats"
    echo "{\"bench\": \"generate\", \"model\": \"$model\", \"context\": $n, \"stats\": $stats}" >> "$out/results.jsonl"
  done
done
echo "results: $out/results.jsonl"
