# Shell helpers shared by the experiment scripts (sourced, not run). The caller sets WORK (its work
# directory) and EXPERIMENT (the name its error messages start with); `probe` also reads S (the swarmt
# binary), IDS (the recall task's id options) and the array ON (the device options).

timed() {  # out_dir command...: runs the command unless out_dir has a config.json, records its seconds
  local out=$1; shift
  [ -f "$out/config.json" ] && return 0
  local t0; t0=$(date +%s)
  "$@" > "$out.log" 2>&1 || { echo "$EXPERIMENT: '$*' failed; see $out.log" >&2; tail -n 5 "$out.log" >&2; exit 1; }
  echo $(( $(date +%s) - t0 )) > "$out/train_seconds"
}

rope_scaled() {  # model factor: a copy of WORK/model with linear RoPE scaling by factor; prints its path
  local out="$WORK/$1_rope$2"
  if [ ! -f "$out/config.json" ]; then
    mkdir -p "$out"
    cp "$WORK/$1"/{model.safetensors,tokenizer.json,tokenizer_config.json} "$out/"
    python3 - "$WORK/$1/config.json" "$out/config.json" "$2" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["rope_scaling"] = {"type": "linear", "factor": float(sys.argv[3])}
json.dump(config, open(sys.argv[2], "w"), indent=1)
PY
  fi
  echo "$out"
}

probe() {  # set name model distances samples [eval recall options...]: one `swarmt eval recall` report per
           # call, in WORK/eval/<set>/<name>/d<distances>, kept (a rerun skips it)
  local set=$1 name=$2 model=$3 distances=$4 samples=$5; shift 5
  local out=$WORK/eval/$set/$name/d${distances//,/_}
  [ -f "$out/summary.json" ] ||
    "$S" -q eval recall --model "$model" --distances "$distances" --samples "$samples" --out "$out" $IDS "${ON[@]}" \
      "$@" > /dev/null
}
