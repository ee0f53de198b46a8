#!/usr/bin/env bash
# ARMT's associative retrieval (specs/armt.md §4.1, §5): a pretrained decoder with a context of T tokens,
# wrapped in ARMT, answers about facts many segments back, picks the asked key's value among others, and
# gives the latest value of a key that was rewritten; a full-attention model trained on the same data
# cannot reach past its training length.
#
# Task: token-level recall (docs/data.md): a fact is "key value" (8 keys a-h, 8 values A-H, filler bytes
# 128-255), a question repeats the key, the answer is the next token. T = 16. Models (recipe and budgets in
# experiments/armt_retrieval_configs.py):
#   base         the pretrained byte model (a language model)
#   base_recall  the base fine-tuned to recall inside its own context (the in-context reference)
#   armt         ARMT over base, 2 -> 4 -> 8 segments
#   full         the fair baseline: base with full attention trained on the same task configs,
#                steps and learning rate, stage by stage (in distribution up to 8T)
#   full_rope    the same model with linear RoPE scaling by L / 8T past 8T
#   armt_noread  with --no-read: the same ARMT recipe, its memory tokens not reading the memory (each
#                write computed from its own segment alone; docs/armt.md)
#   armt_gate    with --read-gate: armt_noread with a gate on every read, so that a position can leave the
#                memory unread (`read_gate`, docs/armt.md)
#   armt_sep     with --separate-write: armt_noread with a separate write pass, so that the keys a segment
#                writes come from that segment alone (`separate_write_pass`, docs/armt.md)
#   armt_linear  with --linear-keys: armt_noread with signed keys (`feature_map` "linear", docs/armt.md), so that
#                two facts' keys can be orthogonal and a later write leave an earlier one's answer alone
#   armt8_noread with --eight-layers: base8, the base with 8 layers pretrained as base is, wrapped like
#                armt_noread, and its own fair baseline full8 / full8_rope (full attention over base8)
#   armt_wide_noread
#                with --wide-base: likewise over base_wide, the base twice as wide (d 256, 8 heads), with
#                full_wide / full_wide_rope
#   armt_lm, armt_denom, armt_denom_nogamma
#                with --recipe: the recipe's parts, beside armt_noread (seed 1): a continued language-model
#                phase (2 -> 4 -> 8 segments of essay text) before the recall phases; the normalised rule
#                with and without the gamma correction (phases s2 and s4)
#   armt_probe   with --probe-layout: armt_noread trained on the probes' own layout (one fact per segment,
#                every key asked once after all of them, in a random order: the 2024 paper's associative
#                retrieval), with its own fair baseline full_probe / full_probe_rope (full attention on the
#                same data, in distribution up to 12T); then armt_probe_rw and full_probe_rw, each of them
#                trained on with every key rewritten twice (the 2024 paper's retrieval with rewrites)
#   armt_hidden  with --hidden-answers: armt_probe's recipe with no answer a model can give without the key
#                (distinct values, each question followed by filler, not its answer), after the study's
#                two-segment binding stage, and its fair baseline full_hidden / full_hidden_rope
#   armt_bind    with --bind-base: base_bind, a base of the same shape pretrained from random initialisation on
#                in-context recall (which the language-model base does not learn at these budgets), wrapped
#                like armt_hidden, with its fair baseline full_bind / full_bind_rope over base_bind
#   armt_swax    with --swax-base: the same ARMT recipe over swax_base, a SWAX model of the base's size
#                (mLSTM and sliding-window attention) pretrained like base: neither paper wraps a hybrid
# Probes (`swarmt eval recall`, answers by argmax over all 259 ids; chance among the 8 values 12.5%):
#   in context   two facts and their questions inside the first segment (the base's own context; 50% for
#                picking one of the two stated values)
#   one fact     asked 2T ... 32T later
#   five facts   one per segment (gap T - 2), every one asked 5T ... 64T after it: each question has 4
#                distractors (20% for a model that picks one of the five stated values); asked in the order
#                stated and, as `five_facts_shuffled`, in a random order (--shuffle-questions: in stated
#                order a memory that answers its oldest unasked fact needs no key)
#   rewrites     five facts stated in three rounds, the answer the latest value, asked 8T ... 64T later
#   five facts, no cue
#                `five_facts_hidden`: five distinct values, asked in a random order, the answers not shown
#                (--distinct-values --hide-answers): a model that does not bind keys to values scores 20%
# Every recall report gives the key-blind floor beside each accuracy (`key_blind_percent`: a model that
# knows the stated values but not which key holds which; about 56% for five facts asked in a random order
# with the answers shown, since values repeat and the answers given rule theirs out).
# every cell with its 95% Wilson interval; and for every ARMT arm, `swarmt armt lookup` on the five-fact
# probe at 8T: whether each memory layer reads a fact back by its key (20% when its reads ignore the key).
#
# Usage: experiments/armt_retrieval.sh [--quick] [--second-seed] [--no-read] [--read-gate] [--separate-write]
#                                   [--linear-keys] [--probe-layout] [--hidden-answers] [--bind-base]
#                                   [--eight-layers] [--wide-base] [--recipe]
#                                   [--swax-base]
#                                   [--device DEV] [BUILD_DIR]
#   full: about 50 minutes on a fast 2-core machine, 200 questions per cell (an earlier run of this recipe
#   with each key asked once; on a 2-core machine 2.5 times slower ARMT's 8-segment phase alone takes
#   about 95 minutes, and the probes 7 minutes: docs/results/README.md); --quick: about 10 minutes, 40
#   per cell (28 minutes with --no-read --read-gate --separate-write --eight-layers --recipe on a 2-core
#   machine: docs/results/armt_retrieval_quick/).
#   --second-seed: also ARMT with another seed (memory initialisation and data order) and its five-fact
#   probes, the headline rows twice (ARMT's training time again, 44 minutes on the fast machine).
#   --no-read: also armt_noread (with --second-seed its second seed too), with ARMT's probes (ARMT's
#   training time again, per seed). --read-gate: likewise armt_gate. --separate-write: likewise armt_sep
#   (a second pass per writing segment: 68 min against 63 for armt_noread trained beside it on one core).
#   --linear-keys: likewise armt_linear (the same cost as armt_noread).
#   --probe-layout: likewise armt_probe, and full_probe's three stages (65-75 min for armt_probe and 15 for
#   full_probe, each on one core beside other runs), then the rewrite stage of each (about 35 and 8 min).
#   --hidden-answers: likewise armt_hidden and full_hidden's four stages. --bind-base: base_bind (about 5 min
#   on one core), armt_bind (with --second-seed its second seed too) and full_bind's three stages.
#   --eight-layers: also base8, armt8_noread (with --second-seed its second seed too) and the full-attention
#   stages over base8, with the probes of armt and full (an ARMT arm over base8 takes twice armt's time).
#   --wide-base: likewise base_wide, armt_wide_noread and full_wide (each stage about 3.3 times the time of
#   the same stage over base on one core: 3.0 against 10 steps/s at 2 segments).
#   --recipe: also armt_lm, armt_denom and armt_denom_nogamma, with ARMT's probes (about twice ARMT's time).
#   --swax-base: also swax_base and ARMT over it (armt_swax), with ARMT's probes (ARMT's training time again).
#   --device cuda: every training and probe on that device (a CUDA build, docs/scaling.md), one process;
#   on one H200, ARMT trained at about 1.6e4 tokens/s against 2.2e3-2.7e3 on the 2 cores of the same
#   study (the two runs' logs, not a same-run benchmark; docs/scaling.md).
#   Work files go to BUILD_DIR/experiments/armt_retrieval[_quick]/, results (results.json, README.md, SVG
#   plots) to docs/results/armt_retrieval[_quick]/. Stages already in the work directory are reused.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=full SEEDS=1 SWAX=0 RECIPE=0 BIND=0 DEVICE=cpu
BASES=()  # further bases, each wrapped like armt_noread beside its own baseline: base<tag>, armt<tag>_noread, full<tag>
ARMS=()  # further ARMT arms over base: armt_<arm>, configs armt_<arm>[_seed2]_train.json
while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick; shift ;;
    --second-seed) SEEDS=2; shift ;;
    --no-read) ARMS+=(noread); shift ;;
    --read-gate) ARMS+=(gate); shift ;;
    --separate-write) ARMS+=(sep); shift ;;
    --linear-keys) ARMS+=(linear); shift ;;
    --probe-layout) ARMS+=(probe); shift ;;
    --hidden-answers) ARMS+=(hidden); shift ;;
    --bind-base) BIND=1; shift ;;
    --swax-base) SWAX=1; shift ;;
    --eight-layers) BASES+=(8); shift ;;
    --wide-base) BASES+=(_wide); shift ;;
    --recipe) RECIPE=1; shift ;;
    --device) [ $# -ge 2 ] || { echo "armt_retrieval: --device needs a value (cpu, cuda, cuda:N)" >&2; exit 2; }
              DEVICE=$2; shift 2 ;;
    -*) echo "armt_retrieval: unknown option '$1' (options: --quick, --second-seed, --no-read, --read-gate, --separate-write, --linear-keys, --probe-layout, --hidden-answers, --bind-base, --eight-layers, --wide-base, --recipe, --swax-base, --device DEV)" >&2; exit 2 ;;
    *) break ;;
  esac
done
BUILD=${1:-build}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "armt_retrieval: $S not found; run 'make build' first" >&2; exit 2; }
if [ "$DEVICE" = cpu ]; then NPROC=${NPROC:-2}; else NPROC=1; fi
ON=(--device "$DEVICE")            # probes
RUN=(--nproc-per-node "$NPROC" "${ON[@]}")  # trainings
T=16
IDS="--keys 97:105 --values 65:73 --filler 128:256"
if [ $MODE = quick ]; then WORK=$BUILD/experiments/armt_retrieval_quick SAMPLES=40 SUFFIX=_quick
else WORK=$BUILD/experiments/armt_retrieval SAMPLES=200 SUFFIX=; fi
RESULTS=docs/results/armt_retrieval$SUFFIX
mkdir -p "$WORK/eval"
start=$(date +%s)

EXPERIMENT=armt_retrieval
source experiments/lib.sh

{ read -r stages; read -r probe_stages; read -r rewrite_stage; read -r hidden_stages; read -r bind_stages; } \
  < <(python3 experiments/armt_retrieval_configs.py $MODE "$WORK")
PROBE=0; [[ " ${ARMS[*]} " == *" probe "* ]] && PROBE=1
HIDDEN=0; [[ " ${ARMS[*]} " == *" hidden "* ]] && HIDDEN=1
timed "$WORK/base" "$S" train --config "$WORK/base_train.json" --out "$WORK/base" "${RUN[@]}"
timed "$WORK/base_recall" "$S" train --config "$WORK/base_recall_train.json" --out "$WORK/base_recall" "${RUN[@]}"
timed "$WORK/armt" "$S" armt train --base "$WORK/base" --config "$WORK/armt_train.json" --out "$WORK/armt" "${RUN[@]}"
if [ $SEEDS = 2 ]; then
  timed "$WORK/armt_seed2" "$S" armt train --base "$WORK/base" --config "$WORK/armt_seed2_train.json" \
    --out "$WORK/armt_seed2" "${RUN[@]}"
fi
for arm in "${ARMS[@]}"; do
  names=armt_$arm; [ $SEEDS = 2 ] && names+=" armt_${arm}_seed2"
  for name in $names; do
    timed "$WORK/$name" "$S" armt train --base "$WORK/base" --config "$WORK/${name}_train.json" \
      --out "$WORK/$name" "${RUN[@]}"
  done
done
if [ $PROBE = 1 ]; then  # the rewrite stage, trained on from the probe-layout arm
  timed "$WORK/armt_probe_rw" "$S" armt train --init "$WORK/armt_probe" --config "$WORK/armt_probe_rw_train.json" \
    --out "$WORK/armt_probe_rw" "${RUN[@]}"
fi
if [ $BIND = 1 ]; then  # a base that binds in its own context, and ARMT over it
  timed "$WORK/base_bind" "$S" train --config "$WORK/base_bind_train.json" --out "$WORK/base_bind" "${RUN[@]}"
  names=armt_bind; [ $SEEDS = 2 ] && names+=" armt_bind_seed2"
  for name in $names; do
    timed "$WORK/$name" "$S" armt train --base "$WORK/base_bind" --config "$WORK/${name}_train.json" --out "$WORK/$name" \
      "${RUN[@]}"
  done
fi
if [ $SWAX = 1 ]; then
  timed "$WORK/swax_base" "$S" train --config "$WORK/swax_base_train.json" --out "$WORK/swax_base" "${RUN[@]}"
  timed "$WORK/armt_swax" "$S" armt train --base "$WORK/swax_base" --config "$WORK/armt_train.json" \
    --out "$WORK/armt_swax" "${RUN[@]}"
fi
RECIPE_ARMS="armt_lm armt_denom armt_denom_nogamma"
if [ $RECIPE = 1 ]; then
  for name in $RECIPE_ARMS; do
    timed "$WORK/$name" "$S" armt train --base "$WORK/base" --config "$WORK/${name}_train.json" --out "$WORK/$name" \
      "${RUN[@]}"
  done
fi
for tag in "${BASES[@]}"; do
  timed "$WORK/base$tag" "$S" train --config "$WORK/base${tag}_train.json" --out "$WORK/base$tag" "${RUN[@]}"
  names=armt${tag}_noread; [ $SEEDS = 2 ] && names+=" armt${tag}_noread_seed2"
  for name in $names; do  # armt_noread's configs: the ARMT config does not name its base
    timed "$WORK/$name" "$S" armt train --base "$WORK/base$tag" --config "$WORK/${name/armt$tag/armt}_train.json" \
      --out "$WORK/$name" "${RUN[@]}"
  done
done
fulls=full; for tag in "${BASES[@]}"; do fulls+=" full$tag"; done
[ $PROBE = 1 ] && fulls+=" full_probe"
[ $HIDDEN = 1 ] && fulls+=" full_hidden"
[ $BIND = 1 ] && fulls+=" full_bind"
stages_of() {  # a fair baseline's stages: over base (full_2, ...), base8 (full8_2, ...), base_wide, or a layout's own
  case $1 in
    full_probe) echo "$probe_stages" ;;
    full_hidden) echo "$hidden_stages" ;;
    full_bind) echo "$bind_stages" ;;
    *) echo "${stages//full_/${1}_}" ;;
  esac
}
trained_length() {  # tokens a fair baseline was trained at (its last stage's segments)
  local last; last=$(stages_of "$1"); echo $(( ${last##*_} * T ))
}
for full in $fulls; do
  last=
  for stage in $(stages_of $full); do
    timed "$WORK/$stage" "$S" train --config "$WORK/$stage.json" --out "$WORK/$stage" "${RUN[@]}"
    last=$stage
  done
  [ -e "$WORK/$full" ] || ln -s "$last" "$WORK/$full"
done
if [ $PROBE = 1 ]; then
  timed "$WORK/$rewrite_stage" "$S" train --config "$WORK/$rewrite_stage.json" --out "$WORK/$rewrite_stage" "${RUN[@]}"
  [ -e "$WORK/full_probe_rw" ] || ln -s "$rewrite_stage" "$WORK/full_probe_rw"
fi

five=$(( SAMPLES / 5 ))
# Five facts with no answer that needs no key: distinct values, asked in a random order, the answers not shown.
hidden=(--pairs 5 --gap $((T - 2)) --shuffle-questions --distinct-values --hide-answers)
armts=armt; for arm in "${ARMS[@]}"; do armts+=" armt_$arm"; done; [ $SWAX = 1 ] && armts+=" armt_swax"
for tag in "${BASES[@]}"; do armts+=" armt${tag}_noread"; done; [ $RECIPE = 1 ] && armts+=" $RECIPE_ARMS"
[ $BIND = 1 ] && armts+=" armt_bind"
in_context_models="$armts $fulls base base_recall"; [ $SWAX = 1 ] && in_context_models+=" swax_base"
[ $BIND = 1 ] && in_context_models+=" base_bind"
for tag in "${BASES[@]}"; do in_context_models+=" base$tag"; done
for model in $in_context_models; do
  probe in_context $model "$WORK/$model" 4 $((SAMPLES / 2)) --pairs 2
done
for model in $armts $fulls; do
  probe one_fact $model "$WORK/$model" $((2 * T)),$((4 * T)),$((8 * T)) $SAMPLES --pairs 1
  probe five_facts $model "$WORK/$model" $((5 * T)),$((8 * T)) $five --pairs 5 --gap $((T - 2))
  probe five_facts_shuffled $model "$WORK/$model" $((5 * T)),$((8 * T)) $five --pairs 5 --gap $((T - 2)) \
    --shuffle-questions
  probe five_facts_hidden $model "$WORK/$model" $((5 * T)),$((8 * T)) $five "${hidden[@]}"
  probe rewrites $model "$WORK/$model" $((8 * T)) $five --pairs 5 --gap $((T - 2)) --rewrites 2
done
for model in $armts; do
  probe one_fact $model "$WORK/$model" $((16 * T)),$((32 * T)) $SAMPLES --pairs 1
done
if [ $SEEDS = 2 ]; then  # the headline rows again, from the second seed
  seconds=armt_seed2; for arm in "${ARMS[@]}"; do seconds+=" armt_${arm}_seed2"; done
  for tag in "${BASES[@]}"; do seconds+=" armt${tag}_noread_seed2"; done
  [ $BIND = 1 ] && seconds+=" armt_bind_seed2"
  for model in $seconds; do
    probe in_context $model "$WORK/$model" 4 $((SAMPLES / 2)) --pairs 2
    probe five_facts $model "$WORK/$model" $((5 * T)),$((8 * T)) $five --pairs 5 --gap $((T - 2))
    probe five_facts $model "$WORK/$model" $((16 * T)),$((32 * T)),$((64 * T)) $five --pairs 5 --gap $((T - 2))
    probe five_facts_shuffled $model "$WORK/$model" $((5 * T)),$((8 * T)) $five --pairs 5 --gap $((T - 2)) \
      --shuffle-questions
    probe five_facts_shuffled $model "$WORK/$model" $((16 * T)),$((32 * T)),$((64 * T)) $five --pairs 5 \
      --gap $((T - 2)) --shuffle-questions
    probe five_facts_hidden $model "$WORK/$model" $((5 * T)),$((8 * T)),$((16 * T)),$((32 * T)),$((64 * T)) $five \
      "${hidden[@]}"
  done
fi
for model in $armts; do
  probe five_facts $model "$WORK/$model" $((16 * T)),$((32 * T)),$((64 * T)) $five --pairs 5 --gap $((T - 2))
  probe five_facts_shuffled $model "$WORK/$model" $((16 * T)),$((32 * T)),$((64 * T)) $five --pairs 5 \
    --gap $((T - 2)) --shuffle-questions
  probe five_facts_hidden $model "$WORK/$model" $((16 * T)),$((32 * T)),$((64 * T)) $five "${hidden[@]}"
  probe rewrites $model "$WORK/$model" $((16 * T)),$((32 * T)),$((64 * T)) $five --pairs 5 --gap $((T - 2)) --rewrites 2
done
# What each ARMT arm's memory reads (`swarmt armt lookup`, docs/armt.md): the five-fact probes at 8T, every
# memory layer's reads against its writes (on the CPU: the models are small).
mkdir -p "$WORK/eval/lookup"
for model in $armts; do
  out=$WORK/eval/lookup/$model.json
  [ -f "$out" ] || "$S" -q armt lookup --model "$WORK/$model" --pairs 5 --gap $((T - 2)) --distance $((8 * T)) \
    --samples $five $IDS --json "$out" > /dev/null
done
# Full attention past its training length (8T; 12T for full_probe), as trained and with linear RoPE scaling
# that maps the probe's whole input (the statements before the distance included) into the trained positions.
fits() { echo $(( ($1 + trained - 1) / trained )); }  # input tokens -> the smallest integer factor ($trained tokens)
for full in $fulls; do
  trained=$(trained_length $full)
  for n in 16 32; do
    d=$((n * T))
    probe one_fact $full "$WORK/$full" $d $SAMPLES --pairs 1
    probe five_facts $full "$WORK/$full" $d $five --pairs 5 --gap $((T - 2))
    probe rewrites $full "$WORK/$full" $d $five --pairs 5 --gap $((T - 2)) --rewrites 2
    probe one_fact ${full}_rope "$(rope_scaled $full "$(fits $((d + 10)))")" $d $SAMPLES --pairs 1
    probe five_facts ${full}_rope "$(rope_scaled $full "$(fits $((d + 5 * T + 10)))")" $d $five --pairs 5 --gap $((T - 2))
    probe five_facts_shuffled $full "$WORK/$full" $d $five --pairs 5 --gap $((T - 2)) --shuffle-questions
    probe five_facts_shuffled ${full}_rope "$(rope_scaled $full "$(fits $((d + 5 * T + 10)))")" $d $five --pairs 5 \
      --gap $((T - 2)) --shuffle-questions
    probe five_facts_hidden $full "$WORK/$full" $d $five "${hidden[@]}"
    probe five_facts_hidden ${full}_rope "$(rope_scaled $full "$(fits $((d + 5 * T + 10)))")" $d $five "${hidden[@]}"
    probe rewrites ${full}_rope "$(rope_scaled $full "$(fits $((d + 15 * T + 10)))")" $d $five --pairs 5 \
      --gap $((T - 2)) --rewrites 2
  done
done

# Rewrites asked in a random order: the rewrite stage's models, the arms that never saw a rewrite, and
# full_probe_rw past its training length (20T) with RoPE scaling.
if [ $PROBE = 1 ]; then
  rewrites=(--pairs 5 --gap $((T - 2)) --rewrites 2 --shuffle-questions)
  for model in armt armt_probe armt_probe_rw; do
    probe rewrites_shuffled $model "$WORK/$model" $((5 * T)),$((8 * T)),$((16 * T)),$((32 * T)),$((64 * T)) $five \
      "${rewrites[@]}"
  done
  probe rewrites_shuffled full_probe_rw "$WORK/full_probe_rw" $((5 * T)),$((8 * T)) $five "${rewrites[@]}"
  trained=$(( ${rewrite_stage##*_} * T ))
  for n in 16 32; do
    d=$((n * T))
    probe rewrites_shuffled full_probe_rw "$WORK/full_probe_rw" $d $five "${rewrites[@]}"
    probe rewrites_shuffled full_probe_rw_rope "$(rope_scaled full_probe_rw "$(fits $((d + 15 * T + 10)))")" $d $five \
      "${rewrites[@]}"
  done
fi

python3 experiments/armt_retrieval_report.py "$WORK" "$RESULTS" --mode $MODE --segment $T --swarmt "$S" \
  --seconds $(( $(date +%s) - start ))
echo "results: $RESULTS/README.md"
