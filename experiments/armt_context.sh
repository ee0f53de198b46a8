#!/usr/bin/env bash
# Claim 2 (specs/armt.md): ARMT extends a pretrained decoder with a context of T tokens to inputs many
# times longer, retrieving by key among distractors, at a memory footprint that does not grow; and it keeps
# the base's accuracy inside the base's own context.
#
# Models (recipe and budgets in experiments/armt_configs.py, data in experiments/armt_common.sh):
#   armt          ARMT over base_qa, memory in all layers, continued-LM phase then QA phase (2 -> 4 -> 8)
#   full          the fair baseline: base_qa with full attention trained on the same files, steps and
#                 learning rate (in distribution up to 8T)
#   full_rope     the same model with linear RoPE scaling by L / 8T past 8T
#   base_last_T   base_qa given only the last T tokens (its own context)
#   base_qa       at 1T: the reference for "no loss inside the base's context"
# evaluated on the key alone (1 ... 32T), among 4 distractors (2 ... 32T), 2 distractors inside one segment
# (1T) and rewrites (16, 32, 64T), EXAMPLES per length, with 95% Wilson intervals.
#
# Usage: experiments/armt_context.sh [--quick] [BUILD_DIR]
#   --quick: every budget cut (about 10 minutes; the models learn little); full: about an hour on 2 cores.
#   Work files go to BUILD_DIR/experiments/armt[_quick]/, results to docs/results/armt_context[_quick]/.
source "$(dirname "$0")/armt_common.sh"
RESULTS=docs/results/armt_context$SUFFIX
start=$(date +%s)
train_base_and_armt
train_full_attention

for set in eval_d0 eval_d4 eval_d2_1T eval_rewrites; do
  evaluate armt "$WORK/armt" $set
  evaluate base_last_T "$WORK/base_qa" $set --context-limit $T
done
evaluate base_qa "$WORK/base_qa" eval_d2_1T
evaluate base_qa "$WORK/base_qa" "$(length_subset eval_d0 $T)"
# Full attention inside its training lengths, then with and without RoPE scaling beyond them.
evaluate full "$WORK/full" eval_d2_1T
for set in eval_d0 eval_d4; do
  evaluate full "$WORK/full" "$(length_subset $set $(lengths 1 2 4 8 | tr , ' '))"
  for n in 16 32; do
    sub=$(length_subset $set $((n * T)))
    evaluate full "$WORK/full" "$sub"
    evaluate full_rope "$(rope_scaled full $((n / 8)))" "$sub"
  done
done
for n in 16 32; do
  sub=$(length_subset eval_rewrites $((n * T)))
  evaluate full "$WORK/full" "$sub"
  evaluate full_rope "$(rope_scaled full $((n / 8)))" "$sub"
done
[ -f "$WORK/cost.json" ] || "$S" -q armt cost --model "$WORK/armt" --segments 1,2,4,8,16,32,64 --json "$WORK/cost.json" > /dev/null

python3 experiments/armt_report.py context "$WORK" "$RESULTS" --mode $MODE --segment $T --swarmt "$S" \
  --seconds $(( $(date +%s) - start ))
echo "results: $RESULTS/README.md"
