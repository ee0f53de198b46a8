#!/usr/bin/env bash
# Claim 3 (specs/armt.md): memory in a middle-upper subset of about 20% of the layers keeps most of the
# benefit of memory in all layers, with fewer memory parameters and less work per segment.
#
# Three ARMT models over the same fine-tuned base with the same curriculum (experiments/armt_common.sh):
#   armt       memory in all layers (shared with experiments/armt_context.sh)
#   armt_mid   memory in the middle-upper 20% of the layers ("middle_upper:0.2")
#   armt_low   memory in the first layer only: a subset of the same size at the bottom (the control)
# evaluated on the sets of experiments/armt_context.sh (the key alone, among 4 distractors, 2 distractors
# inside one segment). Still on the 4-layer base: the 8-layer base with five layer subsets is to come.
#
# Usage: experiments/armt_memory_layers.sh [--quick] [BUILD_DIR]
#   Run after experiments/armt_context.sh (same mode): the base model and `armt` are reused from the
#   work directory; run alone, this command trains them first. Results go to
#   docs/results/armt_memory_layers[_quick]/.
source "$(dirname "$0")/armt_common.sh"
RESULTS=docs/results/armt_memory_layers$SUFFIX
start=$(date +%s)
train_base_and_armt
train_armt armt_mid armt_mid_train.json
train_armt armt_low armt_low_train.json
for m in armt armt_mid armt_low; do
  for set in eval_d0 eval_d4 eval_d2_1T; do evaluate $m "$WORK/$m" $set; done
done
for m in armt armt_mid armt_low; do
  [ -f "$WORK/cost_$m.json" ] || "$S" -q armt cost --model "$WORK/$m" --segments 1,8,32 --json "$WORK/cost_$m.json" > /dev/null
done
python3 experiments/armt_report.py layers "$WORK" "$RESULTS" --mode $MODE --segment $T --swarmt "$S" \
  --seconds $(( $(date +%s) - start ))
echo "results: $RESULTS/README.md"
