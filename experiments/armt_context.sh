#!/usr/bin/env bash
# Claim 2 (specs/armt.md): ARMT extends a pretrained decoder with a context of T tokens to inputs many
# times longer, at a cost linear in the length and a memory footprint that does not grow.
#
# The base model and ARMT are trained as described in experiments/armt_common.sh; then, on long-document
# QA at 1, 2, 4, 8, 16 and 32 segments (T = 256 tokens each) and on needles among distractor facts at 2 ... 32:
#   armt           ARMT, memory in all layers
#   base_last_T    the fine-tuned base model, given only the last T tokens (its training context)
#   base_full      the same base model with full attention over the whole input (up to 16 segments)
# and `swarmt armt cost` for FLOPs and peak memory of ARMT vs the base with full attention by length.
#
# Usage: experiments/armt_context.sh [--quick] [BUILD_DIR]
#   --quick: every budget cut (about 10 minutes); full: the recipe of scripts/armt_e2e.sh.
#   Work files go to BUILD_DIR/experiments/armt[_quick]/, results to docs/results/armt_context[_quick]/.
source "$(dirname "$0")/armt_common.sh"
RESULTS=docs/results/armt_context$SUFFIX
start=$(date +%s)
train_base_and_armt
evaluate armt armt
evaluate base_last_T base_answer --context-limit $T
# Full attention over 32T (8192 tokens) is the costliest evaluation of all, so the base with full
# attention is evaluated up to 16T (the cost table below still measures it up to 64 segments).
EVAL_SET=upto16T evaluate base_full base_answer
[ -f "$WORK/cost.json" ] || "$S" -q armt cost --model "$WORK/armt" --segments 1,2,4,8,16,32,64 --json "$WORK/cost.json" > /dev/null
compare_plots "" "ARMT vs base" armt base_last_T base_full
python3 experiments/armt_report.py context "$WORK" "$RESULTS" --mode $MODE --segment $T --seconds $(( $(date +%s) - start )) \
  --models armt base_last_T base_full
echo "results: $RESULTS/README.md"
