# The training data of the ARMT recipe (configs/armt/*.json read these files from WORK), shared by
# scripts/armt_e2e.sh and experiments/armt_common.sh. Sourced; needs S (the swarmt binary) and WORK.
# MAX_SAMPLES (0: none) caps every file, for cut-down runs.
armt_training_data() {
  local name lengths samples seed
  while read -r name lengths samples seed; do
    [ "${MAX_SAMPLES:-0}" -gt 0 ] && [ "$samples" -gt "$MAX_SAMPLES" ] && samples=$MAX_SAMPLES
    [ -f "$WORK/$name.jsonl" ] || "$S" -q data synth long_qa --tokenizer byte --distractors 0 --lengths "$lengths" \
        --samples "$samples" --seed "$seed" --out "$WORK/$name.jsonl"
  done <<'LIST'
base_qa 256 4000 1
base_qa_val 256 64 2
base_answer_qa 256 20000 11
base_answer_qa2 256 20000 13
qa_2seg 512 3200 3
qa_4seg 1024 3200 4
qa_8seg 2048 3200 5
qa_8seg_val 2048 32 6
LIST
}
