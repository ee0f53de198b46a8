#!/usr/bin/env bash
# The ARMT recipe's parts (specs/armt.md §4): is the continued language-model phase needed, does the gamma
# correction matter, and how far does a second seed move the headline numbers?
#
# Three more ARMT models over the same base_qa as experiments/armt_context.sh (same data, same QA steps):
#   armt_s2       the recipe with seed 2 (memory initialisation and data order)
#   armt_nolm     the QA phase alone, without the continued-LM phase
#   armt_nogamma  the recipe with gamma = 1 (no correction of the written value by what the key already reads)
# evaluated on the sets of armt_context.sh; the table sets them beside `armt` (seed 1).
#
# Usage: experiments/armt_recipe.sh [--quick] [BUILD_DIR]
#   Run after experiments/armt_context.sh (same mode) to reuse its base and `armt`; run alone, this command
#   trains them first. Results go to docs/results/armt_recipe[_quick]/.
source "$(dirname "$0")/armt_common.sh"
RESULTS=docs/results/armt_recipe$SUFFIX
start=$(date +%s)
train_base_and_armt
for m in armt_s2 armt_nolm armt_nogamma; do
  train_armt $m ${m}_train.json
done
for m in armt armt_s2 armt_nolm armt_nogamma; do
  for set in eval_d0 eval_d4 eval_d2_1T eval_rewrites; do evaluate $m "$WORK/$m" $set; done
done
python3 experiments/armt_report.py recipe "$WORK" "$RESULTS" --mode $MODE --segment $T --swarmt "$S" \
  --seconds $(( $(date +%s) - start ))
echo "results: $RESULTS/README.md"
