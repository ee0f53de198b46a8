#!/usr/bin/env bash
# ARMT end to end on the byte tokenizer (issue: ARMT acceptance run):
#   1. long-document QA data (long_qa, no distractor facts) at 1, 2, 4, 8 and 16 segments of 256 bytes;
#   2. a tiny Llama-architecture base pretrained by `swarmt train` with a context of one segment;
#   3. ARMT over it, trained with the 2 -> 4 -> 8 segment curriculum (`swarmt armt train`);
#   4. exact match at 16 segments: ARMT vs the base model that sees only the last segment.
# Usage: scripts/armt_e2e.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-$BUILD/armt_e2e}
S=$BUILD/swarmt
mkdir -p "$WORK"
synth() {  # name lengths samples seed
  [ -f "$WORK/$1.jsonl" ] || "$S" -q data synth long_qa --tokenizer byte --distractors 0 --lengths "$2" \
      --samples "$3" --seed "$4" --out "$WORK/$1.jsonl"
}
synth base_qa 256 4000 1
synth base_qa_val 256 64 2
synth qa_2seg 512 1200 3
synth qa_4seg 1024 1200 4
synth qa_8seg 2048 1200 5
synth qa_8seg_val 2048 32 6
synth eval_16seg 4096 100 7
synth eval_1seg 256 100 8

sed "s|WORK|$WORK|g" configs/armt/tiny_base.json > "$WORK/base_train.json"
sed "s|WORK|$WORK|g" configs/armt/tiny_curriculum.json > "$WORK/armt_train.json"
[ -f "$WORK/base/config.json" ] || "$S" train --config "$WORK/base_train.json" --out "$WORK/base"
[ -f "$WORK/armt/config.json" ] || "$S" armt train --base "$WORK/base" --config "$WORK/armt_train.json" --out "$WORK/armt"

"$S" -q eval qa --model "$WORK/base" --data "$WORK/eval_1seg.jsonl" --out "$WORK/eval/base_1seg"
"$S" -q eval qa --model "$WORK/base" --data "$WORK/eval_16seg.jsonl" --context-limit 256 --out "$WORK/eval/base_last_segment_16seg"
"$S" -q eval qa --model "$WORK/armt" --data "$WORK/eval_16seg.jsonl" --out "$WORK/eval/armt_16seg"
"$S" -q eval qa --model "$WORK/armt" --data "$WORK/eval_1seg.jsonl" --out "$WORK/eval/armt_1seg"
"$S" armt cost --model "$WORK/armt" --segments 1,2,4,8,16,32,64 --json "$WORK/cost.json"
