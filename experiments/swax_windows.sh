#!/usr/bin/env bash
# Claim 1 (specs/swax.md §1.5, §6.4): training SWAX with short or stochastic sliding windows makes its
# RNN learn long-range recall; stochastic windows keep the short-context quality of long windows.
#
# Eight models with the same data, width (d 128), depth (4 layers), batch and token budget:
#   swax_short       SWA at the short window T/32 + mLSTM, alternating (pattern MS)
#   swax_long        the same at the long window T/4
#   swax_stochastic  short or long per step (p = 0.5), the last 10% of steps at the long window
#   swa              sliding-window attention only, long window
#   mlstm            mLSTM only
#   gdn_short, gdn_long, gdn_stochastic   the three SWAX schedules with Gated DeltaNet instead of mLSTM
# Each is tested as in the paper (a fixed-window model at its training window, a stochastic one at the
# long window) on RULER needles (niah_single_1, niah_multikey_2) and MQAR at 1x, 2x, 4x, 8x and 16x the training
# length T = 512; the validation loss on essay text measures short-context quality, and the loss by
# position on essay text of 16T tokens shows whether the language model itself extrapolates.
#
# Usage: experiments/swax_windows.sh [--quick] [BUILD_DIR]
#   --quick: 100 steps per model and 3 samples per cell (about 10 minutes); full: 600 steps, 10 samples.
#   Work files (checkpoints, raw evaluations) go to BUILD_DIR/experiments/swax_windows[_quick]/;
#   results (results.json, README.md, SVG plots) to docs/results/swax_windows[_quick]/.
#   Models already trained in the work directory are not trained again.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
BUILD=${1:-build}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "swax_windows: $S not found; run 'make build' first" >&2; exit 2; }
NAME=swax_windows
if [ $quick = 1 ]; then NAME=swax_windows_quick STEPS=100 SAMPLES=3; else STEPS=600 SAMPLES=10; fi
WORK=$BUILD/experiments/$NAME
RESULTS=docs/results/$NAME
# The RULER needle prompts need about 460 byte tokens, so the training length is 512 in both modes.
T=512 SHORT=$((512 / 32)) LONG=$((512 / 4))
LENGTHS="$T,$((2 * T)),$((4 * T)),$((8 * T)),$((16 * T))"
mkdir -p "$WORK" "$RESULTS"
start=$(date +%s)

config() {  # name layer_pattern window_schedule_json
  python3 - "$WORK/$1.json" "$2" "$3" "$T" "$STEPS" "$LONG" <<'PY'
import json, sys
path, pattern, schedule = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
T, steps, long_window = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
# mLSTM and Gated DeltaNet get the same head layout (2 heads, keys 32, values 64) so that the two
# families have the same width and nearly the same parameter count.
model = {"model_type": "swax", "layer_pattern": pattern, "num_hidden_layers": 4, "hidden_size": 128,
         "intermediate_size": 384, "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 32,
         "sliding_window": long_window, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 32, "mlstm_v_head_dim": 64,
         "gdn_num_heads": 2, "gdn_head_dim": 32, "gdn_v_head_dim": 64}
json.dump({"model": model, "tokenizer": "byte", "sequence_length": T,
           "data": {"train": {"type": "synthetic", "loss": "all",
                              "tasks": [{"task": "niah", "weight": 2}, {"task": "mqar", "weight": 1},
                                        {"task": "essay", "weight": 1}]},
                    "validation": {"type": "synthetic", "seed": 424242, "loss": "all", "tasks": [{"task": "essay"}]}},
           "window_schedule": schedule,
           "training": {"max_steps": steps, "batch_size": 8, "optimizer": {"lr": 0.002, "weight_decay": 0.1},
                        "lr_schedule": {"type": "cosine", "warmup_steps": steps // 10, "min_ratio": 0.1},
                        "clip_grad_norm": 1.0, "log_every": 10, "eval_every": steps // 2, "eval_batches": 8,
                        "checkpoint_every": steps // 2, "seed": 1}},
          open(path, "w"), indent=1)
PY
}
fixed() { echo "{\"type\": \"fixed\", \"window\": $1}"; }
STOCHASTIC="{\"type\": \"stochastic\", \"short_window\": $SHORT, \"long_window\": $LONG, \"p_short\": 0.5, \"anneal_fraction\": 0.1}"
config swax_short MS "$(fixed $SHORT)"
config swax_long MS "$(fixed $LONG)"
config swax_stochastic MS "$STOCHASTIC"
config swa S "$(fixed $LONG)"
config mlstm M '{"type": "none"}'
config gdn_short GS "$(fixed $SHORT)"
config gdn_long GS "$(fixed $LONG)"
config gdn_stochastic GS "$STOCHASTIC"
MODELS="swax_short swax_long swax_stochastic swa mlstm gdn_short gdn_long gdn_stochastic"

for m in $MODELS; do
  if [ ! -f "$WORK/$m/config.json" ]; then
    t0=$(date +%s)
    "$S" -q train --config "$WORK/$m.json" --out "$WORK/$m" > /dev/null
    echo $(( $(date +%s) - t0 )) > "$WORK/$m/train_seconds"
  fi
  echo "trained $m: $(tail -n 1 "$WORK/$m/metrics.jsonl")"
done
# Essay text for the loss by position: long_qa contexts of 16T bytes (the built-in essay prose with one
# fact sentence), drawn with their own seed.
if [ ! -f "$WORK/essay_16T.json" ]; then
  "$S" -q data synth long_qa --tokenizer byte --distractors 0 --lengths $((16 * T)) --samples "$SAMPLES" --seed 201 \
    --out "$WORK/essay_16T.jsonl" > /dev/null
  "$S" -q data prepare --input "$WORK/essay_16T.jsonl" --field context --validation-fraction 0 --out "$WORK/essay_16T" > /dev/null
fi
for m in $MODELS; do
  [ -f "$WORK/eval/niah/$m/results.json" ] ||
    "$S" -q eval niah --model "$WORK/$m" --variants niah_single_1,niah_multikey_2 --lengths "$LENGTHS" \
      --samples "$SAMPLES" --max-new-tokens 40 --out "$WORK/eval/niah/$m" > /dev/null
  [ -f "$WORK/eval/mqar/$m/results.json" ] ||
    "$S" -q eval mqar --model "$WORK/$m" --lengths "$LENGTHS" --pairs 8 --samples "$((SAMPLES * 3))" \
      --out "$WORK/eval/mqar/$m" > /dev/null
  [ -f "$WORK/eval/ppl/$m/results.json" ] ||
    "$S" -q eval ppl --model "$WORK/$m" --data "$WORK/essay_16T.json" --length $((16 * T)) --windows "$SAMPLES" \
      --out "$WORK/eval/ppl/$m" > /dev/null
  echo "evaluated $m"
done
for e in niah mqar; do
  for group in mlstm gdn; do
    if [ $group = mlstm ]; then runs="swax_short swax_long swax_stochastic swa mlstm"; else runs="gdn_short gdn_long gdn_stochastic swa"; fi
    dirs=()
    for m in $runs; do dirs+=("$WORK/eval/$e/$m"); done
    "$S" -q eval compare "${dirs[@]}" --out "$WORK/compare/${e}_$group" --title "SWAX windows ($group): $e" > /dev/null
    cp "$WORK/compare/${e}_$group/compare.svg" "$RESULTS/${e}_$group.svg"
  done
done
python3 experiments/swax_windows_report.py "$WORK" "$RESULTS" --mode "$([ $quick = 1 ] && echo quick || echo full)" \
  --seconds $(( $(date +%s) - start )) --models $MODELS
echo "results: $RESULTS/README.md"
