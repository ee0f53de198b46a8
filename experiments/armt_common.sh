# Shared by the ARMT experiments (sourced, not run): data, the base model and the ARMT models, in one
# work directory so that the second experiment reuses what the first trained.
#
# Sets MODE, S, WORK, SUFFIX, T, NPROC and EXAMPLES from the arguments [--quick] [BUILD_DIR].
# Recipe (full mode, the one of scripts/armt_e2e.sh; configs/armt/):
#   1. long-document QA (long_qa: one fact at a random depth in filler text, a question at the end),
#      byte tokenizer, segments of T = 256 tokens;
#   2. a Llama-architecture base (4 layers, d 128) pretrained by `swarmt train` at context T, then
#      fine-tuned on one-segment QA with the loss on the answer tokens (two cosine cycles);
#   3. ARMT over it (8 memory tokens, d_mem 32), continued training with the 2 -> 4 -> 8 segment
#      curriculum, the base trainable.
# Every stage whose output exists is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODE=full
if [ "${1:-}" = --quick ]; then MODE=quick; shift; fi
BUILD=${1:-build}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "armt experiment: $S not found; run 'make build' first" >&2; exit 2; }
NPROC=${NPROC:-2}
if [ $MODE = quick ]; then WORK=$BUILD/experiments/armt_quick EXAMPLES=20 TRAIN_EXAMPLES=800 SUFFIX=_quick
else WORK=$BUILD/experiments/armt EXAMPLES=50 TRAIN_EXAMPLES=0 SUFFIX=; fi
T=256
SEGMENTS="1 2 4 8 16 32"
EVAL_LENGTHS=$(for n in $SEGMENTS; do printf '%s,' $((n * T)); done | sed 's/,$//')
# Five facts with their filler need more than one segment (about 340 tokens), so needles start at 2T.
NEEDLE_LENGTHS=${EVAL_LENGTHS#*,}
mkdir -p "$WORK"
source configs/armt/training_data.sh

timed() {  # out_dir command...: runs the command unless out_dir has a config.json, records its seconds
  local out=$1; shift
  [ -f "$out/config.json" ] && return 0
  local t0; t0=$(date +%s)
  "$@" > "$out.log" 2>&1 || { echo "armt experiment: '$*' failed; see $out.log" >&2; tail -n 5 "$out.log" >&2; exit 1; }
  echo $(( $(date +%s) - t0 )) > "$out/train_seconds"
}

prepare_data() {
  MAX_SAMPLES=$TRAIN_EXAMPLES armt_training_data
  # Evaluation: the fact alone (qa), and the fact among 4 distractor facts of the same form (needles, from 2T).
  [ -f "$WORK/eval_qa.jsonl" ] || "$S" -q data synth long_qa --tokenizer byte --distractors 0 \
      --lengths "$EVAL_LENGTHS" --samples "$EXAMPLES" --seed 101 --out "$WORK/eval_qa.jsonl"
  [ -f "$WORK/eval_needles.jsonl" ] || "$S" -q data synth long_qa --tokenizer byte --distractors 4 \
      --lengths "$NEEDLE_LENGTHS" --samples "$EXAMPLES" --seed 102 --out "$WORK/eval_needles.jsonl"
  python3 experiments/armt_configs.py configs/armt $MODE "$WORK"
}

train_base() {
  timed "$WORK/base" "$S" train --config "$WORK/base_train.json" --out "$WORK/base" --nproc-per-node "$NPROC"
  timed "$WORK/base_answer_1" "$S" train --config "$WORK/base_answer_1.json" --out "$WORK/base_answer_1" --nproc-per-node "$NPROC"
  timed "$WORK/base_answer" "$S" train --config "$WORK/base_answer_2.json" --out "$WORK/base_answer" --nproc-per-node "$NPROC"
}

train_base_and_armt() {  # the stages both ARMT experiments share: data, base model, ARMT in all layers
  prepare_data
  train_base
  train_armt armt armt_train.json
}

train_armt() {  # name config
  timed "$WORK/$1" "$S" armt train --base "$WORK/base_answer" --config "$WORK/$2" --out "$WORK/$1" --nproc-per-node "$NPROC"
}

evaluate() {  # name model [extra eval options...]: exact match on both evaluation sets
  # EVAL_SET=upto16T evaluates on the sets without their 32T bucket (the last of SEGMENTS).
  local name=$1 model=$2 suffix=${EVAL_SET:+_$EVAL_SET}; shift 2
  for task in qa needles; do
    [ -f "$WORK/eval_$task$suffix.jsonl" ] || grep -v "\"bucket\":\"$((32 * T))\"" "$WORK/eval_$task.jsonl" > "$WORK/eval_$task$suffix.jsonl"
    [ -f "$WORK/eval/$task/$name/summary.json" ] ||
      "$S" -q eval qa --model "$WORK/$model" --data "$WORK/eval_$task$suffix.jsonl" --out "$WORK/eval/$task/$name" "$@" > /dev/null
  done
  echo "evaluated $name"
}

compare_plots() {  # name title models...: one SVG per evaluation set, the models side by side, into RESULTS
  local name=$1 title=$2; shift 2
  mkdir -p "$RESULTS"
  for task in qa needles; do
    local dirs=()
    for m in "$@"; do dirs+=("$WORK/eval/$task/$m"); done
    "$S" -q eval compare "${dirs[@]}" --out "$WORK/compare/$name$task" --title "$title: $task" > /dev/null
    cp "$WORK/compare/$name$task/compare.svg" "$RESULTS/$task.svg"
  done
}
