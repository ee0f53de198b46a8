#!/usr/bin/env bash
# Benchmark (not a test): training speed of a config, and where a training step's time goes, for this
# build and optionally an older swarmt binary, in one run.
#
#   bench/train_step_profile.sh [--config FILE] [--steps N] [--rounds R] [--old SWARMT] [--no-profile]
#                               [BUILD_DIR] [OUT_DIR]
#
# Speed: R rounds, the binaries interleaved, each `swarmt train --config FILE --max-steps N` into a fresh
# run directory; tokens/s is the run's own over the steps after its first logged window (metrics.jsonl;
# warm-up excluded), the median over rounds is reported with the ratio new / old. Profile (needs Linux
# perf): one more run per binary under `perf record`, its samples grouped by component from the symbol
# and library names:
#   dense GEMMs (BLAS)       projections, MLP, LM head and their gradients (OpenBLAS or another BLAS)
#   small GEMMs              swarmt's block products (ops/gemm_small: attention bands, recurrent chunks,
#                            and the training linears of ops/dense_linear)
#   recurrent kernels        the mLSTM / Gated DeltaNet chunk loops (gates, solves, fused elementwise)
#   attention kernels        the band attention's softmax, masks and their vectorised helpers
#   fused elementwise        the fused training ops (RMSNorm, gated product, short conv + SiLU, RoPE, AdamW)
#   ATen ops                 every other libtorch op: norms, SwiGLU, embeddings, loss, optimizer, copies
#   memory                   malloc/free, memcpy/memset, page faults
#   threads                  yielding, sleeping and waking workers (OpenMP, BLAS threads)
#   other                    everything else (the kernel's remaining work, loaders, swarmt's own code)
# An older binary runs the ATen path for its kernels, so its time shows under ATen ops and dense GEMMs.
# Default config: configs/train/demo.json; N = 40, R = 3.
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIG=configs/train/demo.json
STEPS=40
ROUNDS=3
OLD=""
PROFILE=1
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --config) CONFIG=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --old) OLD=$2; shift 2 ;;
    --no-profile) PROFILE=0; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "train_step_profile: unknown option $1" >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
BUILD=${positional[0]:-build}
OUT=${positional[1]:-$BUILD/bench_train_step}
NEW=$BUILD/swarmt
[ -x "$NEW" ] || { echo "train_step_profile: $NEW not found; run 'make build' first" >&2; exit 2; }
[ -f "$CONFIG" ] || { echo "train_step_profile: --config $CONFIG: no such file" >&2; exit 2; }
[ -z "$OLD" ] || [ -x "$OLD" ] || { echo "train_step_profile: --old $OLD is not an executable" >&2; exit 2; }
if [ "$PROFILE" = 1 ] && ! command -v perf >/dev/null; then
  echo "train_step_profile: perf not found (Debian: linux-perf); use --no-profile for the speed alone" >&2
  exit 2
fi
mkdir -p "$OUT"
binaries=("$NEW")
names=(new)
if [ -n "$OLD" ]; then binaries+=("$OLD"); names+=(old); fi

# tokens/s of one run: the summary line metrics.jsonl starts with
run_speed() {
  local bin=$1 dir=$2
  rm -rf "$dir"
  "$bin" train --config "$CONFIG" --out "$dir" --max-steps "$STEPS" >"$dir.log" 2>&1 ||
    { echo "train_step_profile: $bin failed, see $dir.log" >&2; exit 1; }
  python3 - "$dir/metrics.jsonl" <<'PY'
import json, sys
# Steady state: the windows after the first logged one. The first steps pay for allocations, page faults
# and thread start-up (815ca28's binary ran its first 10 demo steps at about half its later rate), which
# a long run does not.
lines = [json.loads(l) for l in open(sys.argv[1]) if '"tokens_per_s"' in l]
if len(lines) < 2:
    sys.exit(f"train_step_profile: {sys.argv[1]}: fewer than two logged windows; raise --steps to "
             "at least twice the config's training.log_every")
tokens = sum(b["tokens"] - a["tokens"] for a, b in zip(lines, lines[1:]))
seconds = sum((b["tokens"] - a["tokens"]) / b["tokens_per_s"] for a, b in zip(lines, lines[1:]))
print(tokens / seconds)
PY
}

: >"$OUT/speeds.txt"
for round in $(seq "$ROUNDS"); do
  for i in "${!binaries[@]}"; do
    speed=$(run_speed "${binaries[$i]}" "$OUT/run_${names[$i]}")
    echo "${names[$i]} $speed" >>"$OUT/speeds.txt"
    echo "round $round ${names[$i]}: $speed tokens/s"
  done
done

if [ "$PROFILE" = 1 ]; then
  for i in "${!binaries[@]}"; do
    rm -rf "$OUT/profile_${names[$i]}"
    perf record -q -F 499 -o "$OUT/perf_${names[$i]}.data" -- "${binaries[$i]}" train --config "$CONFIG" \
      --out "$OUT/profile_${names[$i]}" --max-steps "$STEPS" >/dev/null 2>&1
    perf report -i "$OUT/perf_${names[$i]}.data" --no-children --sort dso,sym --stdio -q 2>/dev/null \
      >"$OUT/perf_${names[$i]}.txt"
  done
fi

python3 - "$OUT" "$CONFIG" "$STEPS" "$PROFILE" "${names[@]}" <<'EOF'
import json, re, statistics, sys
out, config, steps, profile, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]
speeds = {}
for line in open(f"{out}/speeds.txt"):
    name, value = line.split()
    speeds.setdefault(name, []).append(float(value))
median = {n: statistics.median(v) for n, v in speeds.items()}
print(f"\n{config}, {steps} steps per run, medians of {len(speeds['new'])} interleaved rounds")
print("| binary | tokens/s (each round) | median |")
print("| --- | --- | --: |")
for n in names:
    print(f"| {n} | {', '.join(f'{v:.0f}' for v in speeds[n])} | {median[n]:.0f} |")
result = {"config": config, "steps": int(steps), "tokens_per_s": speeds}
if "old" in median:
    print(f"new / old: {median['new'] / median['old']:.2f}x")
    result["ratio"] = median["new"] / median["old"]

# component of one perf line (dso and symbol), first match wins
RULES = [
    ("threads", r"sched_yield|__schedule|futex|finish_task_switch|libgomp|pthreadpool|do_sched_yield|schedule_|sched"),
    ("memory", r"malloc|_int_free|\bfree\b|cfree|memmove|memcpy|memset|page_fault|clear_page|do_anonymous_page|"
               r"mmap|munmap|memcg|lru_|folio|handle_mm_fault|zap_|alloc_pages|get_page"),
    ("dense GEMMs (BLAS)", r"openblas|libblas|mkl_|sgemm_|dgemm_"),
    ("small GEMMs", r"gemm_avx512|gemm_avx2|gemm_portable|gemm_small|transpose_8x8|transpose_avx|transpose_small|"
                    r"ops::\(anonymous namespace\)::tile(_avx2)?(_of_width)?<|row_strip(_avx2)?<|rows_times|"
                    r"transposed_times"),
    ("recurrent kernels", r"mlstm_forward_cpu|mlstm_backward_cpu|gated_delta_forward_cpu|gated_delta_backward_cpu|"
                          r"ChunkWork|solve_lower|invert_diagonal"),
    ("attention kernels", r"band_forward_cpu|band_backward_cpu|BlockProducts|avx512_max|avx2_max|exp_shifted|"
                          r"max_of|cap_and_mask"),
    ("fused elementwise", r"GatedProductFunction|RmsNormFunction|ShortConvSiluFunction|RopeFunction|rotate_row|"
                          r"activate_row|forward_row|backward_row|conv_forward|conv_backward|silu_row|"
                          r"silu_backward_row|update_range|AdamW|clip_grad_norm|squared_sum|avx512_exp|avx2_exp"),
    ("ATen ops", r"libtorch|libc10|libsleef|at::|c10::"),
]
ORDER = [r[0] for r in RULES] + ["other"]

def components(path):
    share = {c: 0.0 for c in ORDER}
    for line in open(path):
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(4)
        text = f"{dso} {sym}"
        name = next((c for c, rule in RULES if re.search(rule, text)), "other")
        share[name] += pct
    return share

if profile:
    shares = {n: components(f"{out}/perf_{n}.txt") for n in names}
    result["profile_percent"] = shares
    print("\nwhere the time goes (% of CPU samples; ms per step = share x the run's median step time)")
    header = "| component | " + " | ".join(f"{n} % | {n} ms/step" for n in names) + " |"
    print(header)
    print("| --- |" + " --: | --: |" * len(names))
    cfg = json.load(open(config))
    tokens_per_step = cfg["training"]["batch_size"] * cfg["training"].get("grad_accum", 1) * cfg["sequence_length"]
    for c in ORDER:
        cells = []
        for n in names:
            step_ms = 1000.0 * tokens_per_step / median[n]
            cells.append(f"{shares[n][c]:.1f} | {shares[n][c] / 100 * step_ms:.0f}")
        print(f"| {c} | " + " | ".join(cells) + " |")
json.dump(result, open(f"{out}/train_step_profile.json", "w"), indent=1)
print(f"\nresults: {out}/train_step_profile.json")
EOF
