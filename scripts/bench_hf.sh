#!/usr/bin/env bash
# Benchmark (not a test): generation speed and memory of a SmolLM2-360M-shaped Llama (32 layers, d 960,
# 15 query / 5 kv heads of 64, ffn 2560, vocab 49152, tied embeddings) with random weights run in bf16.
# For each prompt length: prefill tokens/s, decode tokens/s over 32 new tokens, peak RSS, all from
# `swarmt generate --stats`; each measurement is its own process, so peak RSS is that run's.
#
#   bash scripts/bench_hf.sh [BUILD_DIR] [OUT_DIR] [PROMPT_LENGTHS]
#   PROMPT_LENGTHS defaults to "512 2048" (tokens of the byte tokenizer, bos included).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
out=${2:-$build_dir/bench_hf}
lengths=${3:-"512 2048"}
swarmt="$build_dir/swarmt"
[ -x "$swarmt" ] || { echo "bench_hf: $swarmt not found; build it first" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out/results.jsonl"

# The SmolLM2-360M-Instruct config (specs: Hugging Face formats, §2.1).
cat > "$out/smollm2-360m.json" <<'JSON'
{ "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 960, "num_hidden_layers": 32, "num_attention_heads": 15, "num_key_value_heads": 5,
  "head_dim": 64, "intermediate_size": 2560, "hidden_act": "silu",
  "max_position_embeddings": 8192, "rope_theta": 100000, "rope_scaling": null, "rope_interleaved": false,
  "rms_norm_eps": 1e-05, "vocab_size": 49152, "tie_word_embeddings": true,
  "attention_bias": false, "attention_dropout": 0.0, "mlp_bias": false, "pretraining_tp": 1,
  "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2, "torch_dtype": "bfloat16",
  "is_llama_config": true, "initializer_range": 0.02, "use_cache": true }
JSON

model="$out/smollm2-360m"
"$swarmt" -q model init "$out/smollm2-360m.json" --out "$model" --tokenizer byte --force > /dev/null
stored=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['torch_dtype'])" "$model/config.json")
echo "model: $model (weights stored as $stored, run in bfloat16)"

for n in $lengths; do
  # n - 1 bytes: the byte tokenizer gives one token per byte plus bos.
  python3 -c "import sys; t='The quick brown fox jumps over the lazy dog. '; n=int(sys.argv[1]); print((t*(n//len(t)+1))[:n-1], end='')" "$n" > "$out/prompt-$n.txt"
  cmd=("$swarmt" -q generate --model "$model" --prompt-file "$out/prompt-$n.txt" -n 32 --ignore-eos --dtype bfloat16 --stats)
  echo "\$ ${cmd[*]}"
  stats=$("${cmd[@]}" 2>&1 >/dev/null | tail -n 1)
  echo "prompt $n: $stats"
  echo "{\"bench\": \"generate_hf\", \"model\": \"smollm2-360m-shaped\", \"prompt\": $n, \"stored_dtype\": \"$stored\", \"stats\": $stats}" >> "$out/results.jsonl"
done
echo "results: $out/results.jsonl"
