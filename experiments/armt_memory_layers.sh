#!/usr/bin/env bash
# Which layers need a memory (specs/armt.md §3, §5.1): associative memory "primarily benefits from
# representations in the middle and upper layers", so a middle-upper subset of about 20% of the layers
# should keep most of the benefit of memory in all of them, with fewer memory parameters and less work.
#
# Task and recipe: those of experiments/armt_retrieval.sh (token-level recall, T = 16, 8 keys a-h, 8 values
# A-H, filler bytes 128-255), over an 8-layer base so that 20% is a choice of two layers among eight:
#   base8                the byte Llama of the retrieval study with 8 layers instead of 4, pretrained as it is
#   layers_all           ARMT over base8, memory in all 8 layers
#   layers_middle_upper  memory in the middle-upper 20% ("middle_upper:0.2": layers 5 and 6)
#   layers_bottom        memory in layers 0 and 1: a subset of the same size at the bottom (control)
#   layers_top           memory in layers 6 and 7: the same size at the top (control)
#   layers_alternate     memory in every other layer (0, 2, 4, 6)
# Every arm trains the retrieval study's first two ARMT phases (2 segments with two facts, then 4 segments
# with two or three facts, each asked three times; 1500 + 1500 steps of batch 32, against the study's 2000 +
# 2000), the same configs but for `memory_layers` (experiments/armt_retrieval_configs.py).
# Probes (`swarmt eval recall`, argmax over all 259 ids, 95% Wilson intervals):
#   in context   two facts and their questions inside the first segment: each arm's own 1T score, the
#                control for a subset that answers less well for reasons other than the memory
#   three facts  one per segment, asked 3T and 8T later (the count trained in the 4-segment phase)
#   five facts   one per segment, asked 8T, 16T and 32T later: 4 distractors (20% for picking one of the five
#                stated values), a count and lengths never trained
# plus `swarmt armt cost` (FLOPs at 1, 8 and 32 segments) and each arm's memory parameters.
#
# Usage: experiments/armt_memory_layers.sh [--quick] [--device DEV] [BUILD_DIR]
#   full: 70 minutes on 2 cores (measured with a compile running beside it; memory in all layers trained in
#   19 minutes, a subset in 10 to 12), over the hour the experiments aim for; 300
#   questions per three-fact cell and 200 per five-fact cell; --quick: tiny budgets, 40 to 60 per cell,
#   7 min 37 s.
#   Work files go to BUILD_DIR/experiments/armt_memory_layers[_quick]/, results (results.json, README.md,
#   SVG plots) to docs/results/armt_memory_layers[_quick]/. Stages and probes already in the work directory
#   are reused, so an interrupted run goes on where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=full DEVICE=cpu
while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick; shift ;;
    --device) [ $# -ge 2 ] || { echo "armt_memory_layers: --device needs a value (cpu, cuda, cuda:N)" >&2; exit 2; }
              DEVICE=$2; shift 2 ;;
    -*) echo "armt_memory_layers: unknown option '$1' (options: --quick, --device DEV)" >&2; exit 2 ;;
    *) break ;;
  esac
done
BUILD=${1:-build}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "armt_memory_layers: $S not found; run 'make build' first" >&2; exit 2; }
if [ "$DEVICE" = cpu ]; then NPROC=${NPROC:-2}; else NPROC=1; fi
ON=(--device "$DEVICE")
RUN=(--nproc-per-node "$NPROC" "${ON[@]}")
T=16
IDS="--keys 97:105 --values 65:73 --filler 128:256"
if [ $MODE = quick ]; then WORK=$BUILD/experiments/armt_memory_layers_quick SAMPLES=40 SUFFIX=_quick
else WORK=$BUILD/experiments/armt_memory_layers SAMPLES=200 SUFFIX=; fi
RESULTS=docs/results/armt_memory_layers$SUFFIX
mkdir -p "$WORK/eval"
start=$(date +%s)

EXPERIMENT=armt_memory_layers
source experiments/lib.sh

python3 experiments/armt_retrieval_configs.py $MODE "$WORK" > /dev/null
timed "$WORK/base8" "$S" train --config "$WORK/base8_train.json" --out "$WORK/base8" "${RUN[@]}"
probe in_context base8 "$WORK/base8" 4 $((SAMPLES / 2)) --pairs 2
for arm in all middle_upper bottom top alternate; do  # each arm trained and probed before the next
  m=layers_$arm
  timed "$WORK/$m" "$S" armt train --base "$WORK/base8" --config "$WORK/${m}_train.json" --out "$WORK/$m" "${RUN[@]}"
  probe in_context $m "$WORK/$m" 4 $((SAMPLES / 2)) --pairs 2
  probe three_facts $m "$WORK/$m" $((3 * T)),$((8 * T)) $((SAMPLES / 2)) --pairs 3 --gap $((T - 2))
  probe five_facts $m "$WORK/$m" $((8 * T)),$((16 * T)),$((32 * T)) $((SAMPLES / 5)) --pairs 5 --gap $((T - 2))
  [ -f "$WORK/cost_$m.json" ] || "$S" -q armt cost --model "$WORK/$m" --segments 1,8,32 --json "$WORK/cost_$m.json" > /dev/null
done

python3 experiments/armt_layers_report.py "$WORK" "$RESULTS" --mode $MODE --segment $T --swarmt "$S" \
  --seconds $(( $(date +%s) - start ))
echo "results: $RESULTS/README.md"
