#!/usr/bin/env bash
# ARMT end to end on the byte tokenizer (issue: ARMT acceptance run):
#   1. long-document QA data (long_qa, no distractor facts) at 1, 2, 4, 8 and 16 segments of 256 bytes;
#   2. a tiny Llama-architecture base pretrained by `swarmt train` with a context of one segment (loss on
#      all tokens), then fine-tuned on one-segment QA with the loss on the answer tokens in two cosine
#      cycles (lr 2e-3, then 1e-3 on fresh examples), so that it answers when the fact is inside its
#      context;
#   3. ARMT over the fine-tuned base, trained with the 2 -> 4 -> 8 segment curriculum (`swarmt armt train`);
#   4. exact match at 16 segments: ARMT vs the same base model seeing only the last segment.
# Usage: scripts/armt_e2e.sh [BUILD_DIR] [WORK_DIR]
#   NPROC (default 2) workers train each stage (`--nproc-per-node`); the results do not depend on it.
#   Every stage whose output exists is skipped, so an interrupted run continues where it stopped.
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-$BUILD/armt_e2e}
S=$BUILD/swarmt
NPROC=${NPROC:-2}
mkdir -p "$WORK"
source configs/armt/training_data.sh
armt_training_data
synth() {  # name lengths samples seed: the evaluation sets
  [ -f "$WORK/$1.jsonl" ] || "$S" -q data synth long_qa --tokenizer byte --distractors 0 --lengths "$2" \
      --samples "$3" --seed "$4" --out "$WORK/$1.jsonl"
}
synth eval_16seg 4096 100 7
synth eval_1seg 256 100 8

sed "s|WORK|$WORK|g" configs/armt/tiny_base.json > "$WORK/base_train.json"
sed "s|WORK|$WORK|g" configs/armt/tiny_base_answer.json > "$WORK/base_answer_1.json"
sed "s|WORK|$WORK|g" configs/armt/tiny_base_answer_2.json > "$WORK/base_answer_2.json"
sed "s|WORK|$WORK|g" configs/armt/tiny_curriculum.json > "$WORK/armt_train.json"
[ -f "$WORK/base/config.json" ] || "$S" train --config "$WORK/base_train.json" --out "$WORK/base" --nproc-per-node "$NPROC"
[ -f "$WORK/base_answer_1/config.json" ] ||
  "$S" train --config "$WORK/base_answer_1.json" --out "$WORK/base_answer_1" --nproc-per-node "$NPROC"
[ -f "$WORK/base_answer/config.json" ] ||
  "$S" train --config "$WORK/base_answer_2.json" --out "$WORK/base_answer" --nproc-per-node "$NPROC"
[ -f "$WORK/armt/config.json" ] ||
  "$S" armt train --base "$WORK/base_answer" --config "$WORK/armt_train.json" --out "$WORK/armt" --nproc-per-node "$NPROC"

"$S" -q eval qa --model "$WORK/base" --data "$WORK/eval_1seg.jsonl" --out "$WORK/eval/base_pretrained_1seg"
"$S" -q eval qa --model "$WORK/base_answer_1" --data "$WORK/eval_1seg.jsonl" --out "$WORK/eval/base_answer_1_1seg"
"$S" -q eval qa --model "$WORK/base_answer" --data "$WORK/eval_1seg.jsonl" --out "$WORK/eval/base_1seg"
"$S" -q eval qa --model "$WORK/base_answer" --data "$WORK/eval_16seg.jsonl" --context-limit 256 --out "$WORK/eval/base_last_segment_16seg"
"$S" -q eval qa --model "$WORK/armt" --data "$WORK/eval_16seg.jsonl" --out "$WORK/eval/armt_16seg"
"$S" -q eval qa --model "$WORK/armt" --data "$WORK/eval_1seg.jsonl" --out "$WORK/eval/armt_1seg"
"$S" armt cost --model "$WORK/armt" --segments 1,2,4,8,16,32,64 --json "$WORK/cost.json"
