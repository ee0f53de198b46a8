# Shared by the ARMT experiments (sourced, not run): data, the base models, ARMT and the fair baseline, in
# one work directory so that later experiments reuse what the first trained.
#
# Sets MODE, S, WORK, SUFFIX, T, NPROC and EXAMPLES from the arguments [--quick] [BUILD_DIR].
# The task is key -> value retrieval in long documents (long_qa, "code" template, byte tokenizer):
#   "The code word of the Harbor Office is garnet."  ...  Question: What is the code word of the Harbor Office?
# with 0 or 4 distractor facts of the same form about other keys (chance with 4 distractors: 20%, picking
# one of the five values), and with rewrites: a key's value is changed later and the answer is the latest.
# The recipe and budgets are in experiments/armt_configs.py. Every stage whose output exists is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MODE=full
if [ "${1:-}" = --quick ]; then MODE=quick; shift; fi
BUILD=${1:-build}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "armt experiment: $S not found; run 'make build' first" >&2; exit 2; }
NPROC=${NPROC:-2}
if [ $MODE = quick ]; then WORK=$BUILD/experiments/armt_quick EXAMPLES=20 TRAIN_EXAMPLES=400 SUFFIX=_quick
else WORK=$BUILD/experiments/armt EXAMPLES=200 TRAIN_EXAMPLES=4000 SUFFIX=; fi
T=256
lengths() { for n in "$@"; do printf '%s,' $((n * T)); done | sed 's/,$//'; }
mkdir -p "$WORK"
EXPERIMENT="armt experiment"
source experiments/lib.sh

synth() {  # name samples seed options...: one `swarmt data synth long_qa` file, unless it exists
  local name=$1 samples=$2 seed=$3; shift 3
  [ -f "$WORK/$name.jsonl" ] || "$S" -q data synth long_qa --tokenizer byte --samples "$samples" --seed "$seed" \
      --out "$WORK/$name.jsonl" "$@" > /dev/null
}

prepare_data() {
  local n=$TRAIN_EXAMPLES
  # Language-model documents of every template (1 segment, or 2 segments cut to 1 by the base's context).
  synth lm_a $n 1 --distractors 0 --lengths $T
  synth lm_b $n 2 --distractors 4 --lengths $((2 * T))
  [ -f "$WORK/lm.jsonl" ] || cat "$WORK/lm_a.jsonl" "$WORK/lm_b.jsonl" > "$WORK/lm.jsonl"
  synth lm_val 64 3 --distractors 0 --lengths $T
  # Questions the base answers from its own context: 0, 1 or 2 distractors in one segment.
  for d in 0 1 2; do synth base_qa_d$d $n $((10 + d)) --templates code --distractors $d --lengths $T; done
  [ -f "$WORK/base_qa.jsonl" ] || cat "$WORK"/base_qa_d{0,1,2}.jsonl > "$WORK/base_qa.jsonl"
  synth base_qa_val 64 13 --templates code --distractors 2 --lengths $T
  # Per curriculum stage of n segments: LM documents of 2 ... n segments; QA examples in four equal
  # groups: one segment (2 distractors), and 2 ... n segments with 0, 2 and 4 distractors (from 4 segments
  # on, a third of the 4-distractor group with one or two rewrites). The pilot behind this mixture: trained
  # on 4 distractors alone, ARMT learned to carry nothing across segments (not even a lone fact); trained on
  # lone facts it carried them (docs/results/README.md, section 2).
  local stage
  for stage in 2 4 8; do
    local multi; multi=$(lengths $(seq 2 $stage))
    local quarter=$(( n / 4 )) per=$(( n / 4 / (stage - 1) ))
    synth lm_${stage}seg $(( n / (stage - 1) )) $((20 + stage)) --distractors 4 --lengths "$multi"
    synth qa_${stage}seg_one $quarter $((30 + stage)) --templates code --distractors 2 --lengths $T
    synth qa_${stage}seg_d0 $per $((35 + stage)) --templates code --distractors 0 --lengths "$multi"
    synth qa_${stage}seg_d2 $per $((40 + stage)) --templates code --distractors 2 --lengths "$multi"
    local parts=("$WORK/qa_${stage}seg_one.jsonl" "$WORK/qa_${stage}seg_d0.jsonl" "$WORK/qa_${stage}seg_d2.jsonl")
    if [ $stage -ge 4 ]; then  # five keys stated up to three times need 3-4 segments
      synth qa_${stage}seg_d4 $(( 2 * per / 3 )) $((45 + stage)) --templates code --distractors 4 --lengths "$multi"
      synth qa_${stage}seg_rw1 $(( quarter / 6 / (stage - 2) )) $((50 + stage)) --templates code --distractors 4 \
          --rewrites 1 --lengths "$(lengths $(seq 3 $stage))"
      synth qa_${stage}seg_rw2 $(( quarter / 6 / (stage - 3) )) $((60 + stage)) --templates code --distractors 4 \
          --rewrites 2 --lengths "$(lengths $(seq 4 $stage))"
      parts+=("$WORK/qa_${stage}seg_d4.jsonl" "$WORK/qa_${stage}seg_rw1.jsonl" "$WORK/qa_${stage}seg_rw2.jsonl")
    else
      synth qa_${stage}seg_d4 $per $((45 + stage)) --templates code --distractors 4 --lengths "$multi"
      parts+=("$WORK/qa_${stage}seg_d4.jsonl")
    fi
    [ -f "$WORK/qa_${stage}seg.jsonl" ] || cat "${parts[@]}" > "$WORK/qa_${stage}seg.jsonl"
  done
  synth qa_val 32 70 --templates code --distractors 4 --lengths $((8 * T))
  # Evaluation: EXAMPLES per length. The key alone (1 ... 32 segments); among 4 distractors (2 ... 32; five
  # facts need more than one segment); 2 distractors inside one segment (the base's own context); rewrites.
  synth eval_d0 $EXAMPLES 101 --templates code --distractors 0 --lengths "$(lengths 1 2 4 8 16 32)"
  synth eval_d4 $EXAMPLES 102 --templates code --distractors 4 --lengths "$(lengths 2 4 8 16 32)"
  synth eval_d2_1T $EXAMPLES 103 --templates code --distractors 2 --lengths $T
  synth eval_rewrites $EXAMPLES 104 --templates code --distractors 4 --rewrites 2 --lengths "$(lengths 16 32 64)"
  python3 experiments/armt_configs.py $MODE "$WORK" > "$WORK/full_attention_stages"
}

train_base() {
  timed "$WORK/base" "$S" train --config "$WORK/base_train.json" --out "$WORK/base" --nproc-per-node "$NPROC"
  timed "$WORK/base_qa" "$S" train --config "$WORK/base_qa_train.json" --out "$WORK/base_qa" --nproc-per-node "$NPROC"
}

train_armt() {  # name config
  timed "$WORK/$1" "$S" armt train --base "$WORK/base_qa" --config "$WORK/$2" --out "$WORK/$1" --nproc-per-node "$NPROC"
}

train_full_attention() {  # the fair baseline: the same stages with full attention; the last stage is "full"
  local stage last=
  for stage in $(cat "$WORK/full_attention_stages"); do
    timed "$WORK/$stage" "$S" train --config "$WORK/$stage.json" --out "$WORK/$stage" --nproc-per-node "$NPROC"
    last=$stage
  done
  [ -e "$WORK/full" ] || ln -s "$last" "$WORK/full"
}

train_base_and_armt() {  # the stages every ARMT experiment shares: data, base models, ARMT in all layers
  prepare_data
  train_base
  train_armt armt armt_train.json
}

evaluate() {  # name model set [extra eval options...]: exact match of one model on one evaluation set
  local name=$1 model=$2 set=$3; shift 3
  [ -f "$WORK/eval/$set/$name/summary.json" ] ||
    "$S" -q eval qa --model "$model" --data "$WORK/$set.jsonl" --out "$WORK/eval/$set/$name" "$@" > /dev/null
}

length_subset() {  # set length...: the examples of a set at the given lengths, as set_L1_L2...
  local set=$1; shift
  local name=${set}_$(IFS=_; echo "$*")
  [ -f "$WORK/$name.jsonl" ] || python3 - "$WORK/$set.jsonl" "$WORK/$name.jsonl" "$@" <<'EOF'
import json, sys
keep = set(sys.argv[3:])
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as out:
    for line in src:
        if json.loads(line)["bucket"] in keep:
            out.write(line)
EOF
  echo "$name"
}
