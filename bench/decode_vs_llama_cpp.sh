#!/usr/bin/env bash
# Benchmark (not a test): swarmt's prefill and decode against llama.cpp on the same weights, in one run.
#
#   bench/decode_vs_llama_cpp.sh [--llama-cpp DIR] [--shape smollm2-360m|gemma3-1b|gemma3-1b-llama]
#                                [--threads N]
#                                [--prompt N] [--new N] [--reps R] [BUILD_DIR] [OUT_DIR]
#
# The model has random weights stored in bf16, so both engines run the very same values: bf16 as
# stored, fp32 widened exactly. Shapes: smollm2-360m, a Llama (scripts/bench_hf.sh's config, the
# default); gemma3-1b, Gemma-3-1B's config (26 layers, 5 local : 1 global attention, 262k vocabulary),
# timed by swarmt alone against the bound (the GGUF converter here writes Llama only); gemma3-1b-llama,
# a Llama with Gemma-3-1B's matrices (the same widths, heads, layers and tied 262k vocabulary, so the
# same bytes per token), which both engines run: Gemma-3's extra per-token work (sandwich and q/k norms,
# GeLU) is elementwise and small beside the 1.9 GB of bf16 weights every token reads.
# Protocol, per engine and dtype, R repetitions, medians:
#   prefill  tokens/s of a P-token prompt;
#   decode   tokens/s of the forward passes that follow the prompt (swarmt: `generate --stats`'s decode
#            rate; llama.cpp: llama-bench -pg P,G, whose time is the prompt's plus G decode steps, minus
#            the prompt's time from llama-bench -p P).
# The bound: the measured read bandwidth (`swarmt bench memory`, the same run) divided by the bytes of
# weights read per token; each decode rate is reported as a fraction of it.
#
# With --llama-cpp DIR (a llama.cpp checkout the user built with cmake into DIR/build, llama-bench and the
# llama library, e.g. `cmake -B build -DLLAMA_CURL=OFF && cmake --build build --target llama-bench llama`),
# the weights are converted to GGUF (bench/hf_to_gguf.py), both engines' last-position logits are
# compared on one prompt, and llama.cpp is timed beside swarmt. llama.cpp is a yardstick only: nothing
# of swarmt's build or tests needs it. Without --llama-cpp, swarmt alone against the bound.
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA=""
THREADS=2
PROMPT=512
NEW=32
REPS=3
SHAPE=smollm2-360m
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --llama-cpp) LLAMA=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --prompt) PROMPT=$2; shift 2 ;;
    --new) NEW=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --shape) SHAPE=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    -*) echo "decode_vs_llama_cpp: unknown option $1" >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
BUILD=${positional[0]:-build}
OUT=${positional[1]:-$BUILD/bench_decode}
S=$BUILD/swarmt
[ -x "$S" ] || { echo "decode_vs_llama_cpp: $S not found; run 'make build' first" >&2; exit 2; }
case "$SHAPE" in
  smollm2-360m|gemma3-1b|gemma3-1b-llama) ;;
  *) echo "decode_vs_llama_cpp: --shape must be smollm2-360m, gemma3-1b or gemma3-1b-llama, got '$SHAPE'" >&2; exit 2 ;;
esac
if [ "$SHAPE" = gemma3-1b ] && [ -n "$LLAMA" ]; then
  echo "decode_vs_llama_cpp: --shape gemma3-1b runs swarmt alone (bench/hf_to_gguf.py converts Llama only); drop --llama-cpp or use --shape gemma3-1b-llama" >&2
  exit 2
fi
for v in THREADS PROMPT NEW REPS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "decode_vs_llama_cpp: --${v,,} must be a positive integer" >&2; exit 2; }
done
if [ -n "$LLAMA" ]; then
  for f in "$LLAMA/build/bin/llama-bench" "$LLAMA/include/llama.h"; do
    [ -e "$f" ] || { echo "decode_vs_llama_cpp: --llama-cpp $LLAMA: $f not found (build llama-bench first)" >&2; exit 2; }
  done
fi
mkdir -p "$OUT"
export OMP_NUM_THREADS=$THREADS

# The model, stored in bf16: bench_hf.sh's SmolLM2-360M config, Gemma-3-1B's (google/gemma-3-1b-pt), or a
# Llama of Gemma-3-1B's dimensions.
if [ "$SHAPE" = smollm2-360m ]; then
  sed -n '/^{ "architectures"/,/^JSON$/p' scripts/bench_hf.sh | sed '$d' > "$OUT/config.json"
elif [ "$SHAPE" = gemma3-1b-llama ]; then
  cat > "$OUT/config.json" <<'JSON'
{ "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
  "head_dim": 256, "intermediate_size": 6912, "hidden_act": "silu", "rope_theta": 1000000.0,
  "rope_scaling": null, "rms_norm_eps": 1e-06, "max_position_embeddings": 32768, "vocab_size": 262144,
  "tie_word_embeddings": true, "attention_bias": false, "mlp_bias": false,
  "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0, "torch_dtype": "bfloat16" }
JSON
else
  cat > "$OUT/config.json" <<'JSON'
{ "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
  "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
  "head_dim": 256, "intermediate_size": 6912, "hidden_activation": "gelu_pytorch_tanh",
  "query_pre_attn_scalar": 256, "sliding_window": 512, "sliding_window_pattern": 6,
  "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": null, "rms_norm_eps": 1e-06,
  "max_position_embeddings": 32768, "vocab_size": 262144, "tie_word_embeddings": true,
  "attn_logit_softcapping": null, "final_logit_softcapping": null,
  "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0, "torch_dtype": "bfloat16" }
JSON
fi
model=$OUT/$SHAPE-bf16
[ -f "$model/model.safetensors" ] ||
  "$S" -q model init "$OUT/config.json" --out "$model" --tokenizer byte --dtype bfloat16 --force > /dev/null
weight_bytes=$(stat -c %s "$model/model.safetensors")
python3 -c "import sys; t='The quick brown fox jumps over the lazy dog. '; n=int(sys.argv[1]); print((t*(n//len(t)+1))[:n-1], end='')" \
  "$PROMPT" > "$OUT/prompt.txt"  # n - 1 bytes + bos = n tokens

median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

bandwidth=$("$S" -q --threads "$THREADS" bench memory --json | python3 -c "import json,sys; print(json.load(sys.stdin)['read_gb_s'])")
echo "read bandwidth: $bandwidth GB/s ($THREADS threads)"

results=$OUT/results.jsonl
: > "$results"
swarmt_run() {  # dtype -> "prefill decode"
  "$S" -q --threads "$THREADS" generate --model "$model" --prompt-file "$OUT/prompt.txt" -n "$NEW" --ignore-eos \
    --dtype "$1" --stats 2>&1 >/dev/null | tail -n 1 |
    python3 -c "import json,sys; d=json.load(sys.stdin); print(d['prefill_tokens_per_s'], d['decode_tokens_per_s'])"
}

if [ -n "$LLAMA" ]; then
  for t in bf16 f32; do
    [ -f "$OUT/model-$t.gguf" ] || python3 bench/hf_to_gguf.py "$model" "$OUT/model-$t.gguf" --outtype $t > /dev/null
  done
  # Same logits: the prompt's ids through both engines (fp32), last position.
  probe=$OUT/llama_cpp_logits
  [ -x "$probe" ] || c++ -O2 -std=c++17 bench/llama_cpp_logits.cpp -I "$LLAMA/include" -I "$LLAMA/ggml/include" \
    -L "$LLAMA/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$(cd "$LLAMA/build/bin" && pwd)" -o "$probe"
  ids=$(python3 -c "print(','.join(str(1 + (i * 7919) % 256) for i in range(64)))")
  "$probe" "$OUT/model-f32.gguf" "$ids" "$OUT/llama_cpp_logits.f32" "$THREADS" 2> "$OUT/llama_cpp_logits.log"
  "$S" -q forward --model "$model" --ids "$ids" --dtype float32 --out "$OUT/swarmt_logits.safetensors" > /dev/null
  python3 - "$OUT" <<'PY'
import json, struct, sys
out = sys.argv[1]
with open(f"{out}/swarmt_logits.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    info = header["logits"]
    f.seek(8 + n + info["data_offsets"][0])
    rows, vocab = info["shape"]
    f.seek((rows - 1) * vocab * 4, 1)
    ours = struct.unpack(f"<{vocab}f", f.read(vocab * 4))
with open(f"{out}/llama_cpp_logits.f32", "rb") as f:
    raw = f.read()
theirs = struct.unpack(f"<{len(raw) // 4}f", raw)
if len(theirs) < vocab:
    sys.exit(f"decode_vs_llama_cpp: llama.cpp returned {len(theirs)} logits, swarmt {vocab}")
theirs = theirs[:vocab]
diff = max(abs(a - b) for a, b in zip(ours, theirs))
scale = max(abs(a) for a in ours)
print(f"logits (fp32, last of 64 positions): max |swarmt - llama.cpp| = {diff:.3g} (max |logit| {scale:.3g})")
if diff > 1e-3 * max(scale, 1.0):
    sys.exit("decode_vs_llama_cpp: the engines disagree; the timings would not compare the same model")
PY
fi

for dtype in bfloat16 float32; do
  short=$([ $dtype = bfloat16 ] && echo bf16 || echo f32)
  bytes_per_token=$([ $dtype = bfloat16 ] && echo "$weight_bytes" || echo $((2 * weight_bytes)))
  pre=(); dec=(); lpre=(); ldec=()
  for r in $(seq "$REPS"); do  # interleaved, so a slow moment of the machine hits both engines
    read -r p d < <(swarmt_run $dtype)
    pre+=("$p"); dec+=("$d")
    if [ -n "$LLAMA" ]; then
      json=$("$LLAMA/build/bin/llama-bench" -m "$OUT/model-$short.gguf" -t "$THREADS" -p "$PROMPT" -n 0 -r 1 -o json 2>/dev/null)
      pp=$(python3 -c "import json,sys; print(json.loads(sys.stdin.read())[0]['avg_ts'])" <<< "$json")
      json=$("$LLAMA/build/bin/llama-bench" -m "$OUT/model-$short.gguf" -t "$THREADS" -pg "$PROMPT,$NEW" -p 0 -n 0 -r 1 -o json 2>/dev/null)
      total=$(python3 -c "import json,sys; print(json.loads(sys.stdin.read())[0]['avg_ns'] / 1e9)" <<< "$json")
      lpre+=("$pp")
      ldec+=("$(python3 -c "import sys; t, pp, p, g = map(float, sys.argv[1:]); print(g / (t - p / pp))" "$total" "$pp" "$PROMPT" "$NEW")")
    fi
  done
  sp=$(median "${pre[@]}"); sd=$(median "${dec[@]}")
  bound=$(python3 -c "import sys; print(float(sys.argv[1]) * 1e9 / float(sys.argv[2]))" "$bandwidth" "$bytes_per_token")
  line="{\"shape\": \"$SHAPE\", \"dtype\": \"$dtype\", \"threads\": $THREADS, \"prompt\": $PROMPT, \"new\": $NEW, \"reps\": $REPS,"
  line+=" \"read_gb_s\": $bandwidth, \"weight_bytes_per_token\": $bytes_per_token, \"decode_bound_tok_s\": $bound,"
  line+=" \"swarmt\": {\"prefill_tok_s\": $sp, \"decode_tok_s\": $sd}"
  printf "%-8s swarmt     prefill %8.1f tok/s  decode %6.2f tok/s  (%.0f%% of the bound %.1f)\n" $short "$sp" "$sd" \
    "$(python3 -c "print(100 * $sd / $bound)")" "$bound"
  if [ -n "$LLAMA" ]; then
    lp=$(median "${lpre[@]}"); ld=$(median "${ldec[@]}")
    line+=", \"llama_cpp\": {\"prefill_tok_s\": $lp, \"decode_tok_s\": $ld},"
    line+=" \"ratio\": {\"prefill\": $(python3 -c "print($sp / $lp)"), \"decode\": $(python3 -c "print($sd / $ld)")}"
    printf "%-8s llama.cpp  prefill %8.1f tok/s  decode %6.2f tok/s  (%.0f%% of the bound)\n" $short "$lp" "$ld" \
      "$(python3 -c "print(100 * $ld / $bound)")"
    printf "%-8s swarmt / llama.cpp: prefill %.2fx, decode %.2fx\n" $short \
      "$(python3 -c "print($sp / $lp)")" "$(python3 -c "print($sd / $ld)")"
  fi
  echo "$line}" >> "$results"
done
echo "results: $results"
