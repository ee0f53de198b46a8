#!/usr/bin/env bash
# SWAX window-size experiment (specs/swax.md §1.5, §6.4), one command:
#   five models with the same data, width, depth and token budget:
#     swax_short (SWA at the short window + mLSTM), swax_long (long window), swax_stochastic (short or long
#     per step, p = 0.5, the last 10% at the long window), swa (sliding-window attention only, long
#     window), mlstm (mLSTM only);
#   each evaluated on needles (single, multikey) and MQAR at 1x, 2x, 4x, 8x, 16x the training length.
# Results: OUT/<model>/ (training runs), OUT/eval/<eval>/<model>/, OUT/compare/<eval>/ (Markdown, SVG, JSON).
# Usage: experiments/swax_windows.sh [--quick] [BUILD_DIR] [OUT_DIR]
# WORK IN PROGRESS: the trainings run (quick mode: 5 x 100 steps in 4 minutes), but `eval niah` refuses
# 512 tokens: its length fit reserves 128 tokens to generate whatever --max-new-tokens says (454-token
# prompt + 128 > 512). Next: let the reserve follow --max-new-tokens, or train at T = 1024.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
BUILD=${1:-build}
OUT=${2:-docs/results/swax_windows}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "swax_windows: $S not found; run 'make build' first" >&2; exit 2; }
# The needle prompts need about 460 tokens, so T is 512 in both modes.
if [ $quick = 1 ]; then T=512 STEPS=100 SAMPLES=3; else T=512 STEPS=600 SAMPLES=10; fi
SHORT=$((T / 32)) LONG=$((T / 4))
LENGTHS="$T,$((2 * T)),$((4 * T)),$((8 * T)),$((16 * T))"
mkdir -p "$OUT"

config() {  # name pattern window_schedule_json
  python3 - "$OUT/$1.json" "$2" "$3" "$T" "$STEPS" "$LONG" <<'PY'
import json, sys
path, pattern, schedule, T, steps, long_window = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
model = {"model_type": "swax", "layer_pattern": pattern, "num_hidden_layers": 4, "hidden_size": 128,
         "intermediate_size": 384, "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 32,
         "sliding_window": long_window, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 32, "mlstm_v_head_dim": 64}
json.dump({"model": model, "tokenizer": "byte", "sequence_length": T,
           "data": {"train": {"type": "synthetic", "loss": "all",
                              "tasks": [{"task": "niah", "weight": 2}, {"task": "mqar", "weight": 1},
                                        {"task": "essay", "weight": 1}]},
                    "validation": {"type": "synthetic", "seed": 424242, "loss": "all", "tasks": [{"task": "essay"}]}},
           "window_schedule": schedule,
           "training": {"max_steps": steps, "batch_size": 8, "optimizer": {"lr": 0.002, "weight_decay": 0.1},
                        "lr_schedule": {"type": "cosine", "warmup_steps": steps // 10, "min_ratio": 0.1},
                        "clip_grad_norm": 1.0, "log_every": 10, "eval_every": steps // 2, "eval_batches": 4,
                        "checkpoint_every": steps // 2, "seed": 1}},
          open(path, "w"), indent=1)
PY
}
config swax_short MS "{\"type\": \"fixed\", \"window\": $SHORT}"
config swax_long MS "{\"type\": \"fixed\", \"window\": $LONG}"
config swax_stochastic MS "{\"type\": \"stochastic\", \"short_window\": $SHORT, \"long_window\": $LONG, \"p_short\": 0.5, \"anneal_fraction\": 0.1}"
config swa S "{\"type\": \"fixed\", \"window\": $LONG}"
config mlstm M '{"type": "none"}'

MODELS="swax_short swax_long swax_stochastic swa mlstm"
for m in $MODELS; do
  [ -f "$OUT/$m/config.json" ] || "$S" -q train --config "$OUT/$m.json" --out "$OUT/$m" > /dev/null
  echo "trained $m: $(tail -n 1 "$OUT/$m/metrics.jsonl")"
done
for m in $MODELS; do
  # Every model is evaluated at the long window (the SWAX paper's inference setting).
  "$S" -q eval niah --model "$OUT/$m" --variants niah_single_1,niah_multikey_1 --lengths "$LENGTHS" \
    --samples "$SAMPLES" --max-new-tokens 40 --out "$OUT/eval/niah/$m" > /dev/null
  "$S" -q eval mqar --model "$OUT/$m" --lengths "$LENGTHS" --pairs 8 --samples "$SAMPLES" --out "$OUT/eval/mqar/$m" > /dev/null
done
for e in niah mqar; do
  runs=()
  for m in $MODELS; do runs+=("$OUT/eval/$e/$m"); done
  "$S" -q eval compare "${runs[@]}" --out "$OUT/compare/$e" --title "SWAX windows: $e" > /dev/null
done
echo "results: $OUT/compare/niah/compare.md, $OUT/compare/mqar/compare.md"
