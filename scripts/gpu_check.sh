#!/usr/bin/env bash
# GPU check on a machine with an NVIDIA GPU and a PyTorch install (docs/scaling.md):
#   1. builds swarmt against PyTorch's CUDA-enabled libtorch (-DSWARMT_CUDA=ON);
#   2. kernel parity: logits of a SWAX model (SWA + mLSTM), a Gated DeltaNet hybrid and a Llama model on
#      cuda vs cpu, full-sequence and streaming, must agree to fp32 tolerance;
#   3. a short SWAX training and a short ARMT training on the GPU, printing tokens/s (and the CPU's, from
#      the same binary, for the ratio).
# Usage: scripts/gpu_check.sh [BUILD_DIR [CMAKE_ARGS...]]   (needs cmake, ninja or make, a C++17 compiler,
#        python3+torch). CMAKE_ARGS go to the configure step after the script's own, e.g.
#        -DSWARMT_DISTRIBUTED=OFF, or -DCMAKE_PREFIX_PATH="<torch prefix>;<prefix of the other dependencies>".
set -euo pipefail
BUILD=${1:-build-cuda}
shift $(( $# > 0 ? 1 : 0 ))
WORK=$BUILD/gpu_check
PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
python3 -c 'import torch; assert torch.cuda.is_available(), "torch sees no CUDA device"; print("GPU:", torch.cuda.get_device_name(0), "| torch", torch.__version__)'
GEN=()
command -v ninja > /dev/null && GEN=(-G Ninja)
cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DSWARMT_CUDA=ON -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DSWARMT_BUILD_TESTS=OFF -DSWARMT_UNITY_BUILD=ON "$@" > /dev/null
cmake --build "$BUILD" --target swarmt -j "$(nproc)"
S=$BUILD/swarmt
mkdir -p "$WORK"

echo "== kernel parity (cuda vs cpu logits)"
cat > "$WORK/swax.json" <<'EOF'
{"model_type": "swax", "hidden_size": 128, "layer_pattern": "MS", "num_hidden_layers": 4, "num_attention_heads": 4,
 "head_dim": 32, "sliding_window": 64, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 32, "mlstm_v_head_dim": 64,
 "intermediate_size": 256}
EOF
cat > "$WORK/gdn.json" <<'EOF'
{"model_type": "swax", "hidden_size": 128, "layer_pattern": "GS", "num_hidden_layers": 4, "num_attention_heads": 4,
 "head_dim": 32, "sliding_window": 64, "intermediate_size": 256}
EOF
cat > "$WORK/llama.json" <<'EOF'
{"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
 "head_dim": 32, "intermediate_size": 256, "vocab_size": 259}
EOF
IDS=$(python3 -c 'import random; random.seed(1); print(",".join(str(random.randrange(256)) for _ in range(300)))')
for m in swax gdn llama; do
  "$S" -q model init "$WORK/$m.json" --out "$WORK/$m" --force > /dev/null
  for mode in "" "--stream"; do
    "$S" -q forward --model "$WORK/$m" --ids "$IDS" $mode --device cpu --out "$WORK/$m.cpu.safetensors"
    "$S" -q forward --model "$WORK/$m" --ids "$IDS" $mode --device cuda --out "$WORK/$m.cuda.safetensors"
    python3 - "$WORK/$m.cpu.safetensors" "$WORK/$m.cuda.safetensors" "$m ${mode:-full}" <<'EOF'
import json, struct, sys, torch
def logits(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    meta = json.loads(raw[8:8 + n])["logits"]
    a, b = meta["data_offsets"]
    return torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]), dtype=torch.float32).reshape(meta["shape"])
cpu, cuda = logits(sys.argv[1]), logits(sys.argv[2])
diff = (cpu - cuda).abs().max().item()
scale = cpu.abs().max().item()
print(f"  {sys.argv[3]:<14} max |cuda - cpu| = {diff:.2e} (logits up to {scale:.2f})")
sys.exit(0 if diff <= 1e-3 * max(1.0, scale) else 1)
EOF
  done
done

echo "== short trainings (tokens/s)"
cat > "$WORK/swax_train.json" <<'EOF'
{"model": {"hidden_size": 512, "layer_pattern": "MS", "num_hidden_layers": 8, "num_attention_heads": 8, "head_dim": 64,
           "sliding_window": 256, "mlstm_num_heads": 4, "mlstm_qk_head_dim": 64, "mlstm_v_head_dim": 128,
           "intermediate_size": 1408},
 "sequence_length": 2048,
 "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}, {"task": "passkey"}]}},
 "window_schedule": {"type": "stochastic", "short_window": 32, "long_window": 256, "p_short": 0.5},
 "training": {"max_steps": 30, "batch_size": 8, "log_every": 10, "bf16": true}}
EOF
cat > "$WORK/armt_train.json" <<'EOF'
{"armt": {"segment_size": 256, "num_memory_tokens": 16, "d_mem": 64},
 "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
 "curriculum": {"segments": [2, 4], "steps": [10, 10]},
 "training": {"batch_size": 8, "log_every": 5}}
EOF
rm -rf "$WORK/swax_run" "$WORK/armt_run" "$WORK/swax_run_cpu"
"$S" -q train --config "$WORK/swax_train.json" --out "$WORK/swax_run" --device cuda | sed 's/^/  swax cuda: /'
"$S" -q train --config "$WORK/swax_train.json" --out "$WORK/swax_run_cpu" --max-steps 3 | sed 's/^/  swax cpu (3 steps): /'
"$S" -q armt train --base "$WORK/llama" --config "$WORK/armt_train.json" --out "$WORK/armt_run" --device cuda |
  sed 's/^/  armt cuda: /'
echo "gpu_check: OK"
