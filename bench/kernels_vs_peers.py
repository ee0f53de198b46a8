#!/usr/bin/env python3
"""Benchmark (not a test): swarmt's sequence-mixing kernels against their PyTorch peers, in one run.

    python3 bench/kernels_vs_peers.py --mlstm-kernels DIR --fla DIR --einops DIR
                                      [--lengths 16k] [--threads 2] [--reps 1] [--skip swa,...] [BUILD_DIR]

DIRs are checkouts of NX-AI/mlstm_kernels, fla-org/flash-linear-attention and arogozhnikov/einops (only
their pure-PyTorch code runs: no Triton, no GPU). Needs Debian's python3-torch. The peers are yardsticks:
nothing of swarmt's build or tests uses them.

At the peer shapes (batch 1, 4 heads, d_qk 64, d_v 128, chunk 64; attention 4 heads of 64, window 128),
fp32, on THREADS threads, each kernel's forward and forward + backward are timed, best of REPS after a
warm-up:
  mlstm  swarmt's chunkwise kernel   vs  mlstm_kernels' chunkwise "native_custbw" (its own backward)
  gdn    swarmt's chunkwise kernel   vs  fla's naive_chunk_gated_delta_rule (autograd backward)
  swa    swarmt's banded attention   vs  softmax attention with a band mask (N x N scores, autograd)
swarmt runs as `swarmt bench kernels --case` in its own process; the peers run here. Prints each ratio
(peer time / swarmt time) beside the targets of the training-kernel work, and writes them as JSON.
"""
import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
import types

HEADS, DQK, DV, CHUNK = 4, 64, 128, 64
ATT_HEADS, ATT_DIM, WINDOW = 4, 64, 128
TARGETS = {("mlstm", "fwdbwd"): 4.0, ("gdn", "fwd"): 4.0, ("gdn", "fwdbwd"): 50.0, ("swa", "fwdbwd"): 300.0}


def parse_length(text):
    text = text.strip().lower()
    scale = 1024 if text.endswith("k") else 1
    value = int(text[:-1] if text.endswith("k") else text) * scale
    if value < CHUNK:
        raise SystemExit(f"kernels_vs_peers: --lengths: {text} is shorter than one chunk ({CHUNK})")
    return value


def load_file_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_peers(args):
    """The peers' pure-PyTorch functions, imported from the checkouts without their Triton parts."""
    import torch

    for flag, path, probe in (("--mlstm-kernels", args.mlstm_kernels, "mlstm_kernels/torch/chunkwise/native/fwbw.py"),
                              ("--fla", args.fla, "fla/ops/gated_delta_rule/naive.py"),
                              ("--einops", args.einops, "einops/__init__.py")):
        if not os.path.isfile(os.path.join(path, probe)):
            raise SystemExit(f"kernels_vs_peers: {flag} {path}: {probe} not found (a checkout of the peer?)")
    sys.path.insert(0, args.einops)
    sys.path.insert(0, args.mlstm_kernels)
    # mlstm_kernels.torch.utils maps dtypes to Triton's at import time: a stand-in module with those names.
    if importlib.util.find_spec("triton") is None:
        language = types.ModuleType("triton.language")
        language.float32, language.float16, language.bfloat16 = "fp32", "fp16", "bf16"
        triton = types.ModuleType("triton")
        triton.language = language
        sys.modules["triton"], sys.modules["triton.language"] = triton, language
    # torch < 2.4 has custom_fwd/custom_bwd only under torch.cuda.amp; on CPU they change nothing.
    if not hasattr(torch.amp, "custom_fwd"):
        def passthrough(fn=None, **_):
            return fn if fn is not None else (lambda f: f)
        torch.amp.custom_fwd, torch.amp.custom_bwd = passthrough, passthrough
    # The chunkwise package's __init__ imports its Triton kernels: register it empty, keep the native one.
    chunkwise = types.ModuleType("mlstm_kernels.torch.chunkwise")
    chunkwise.__path__ = [os.path.join(args.mlstm_kernels, "mlstm_kernels/torch/chunkwise")]
    sys.modules["mlstm_kernels.torch.chunkwise"] = chunkwise
    from mlstm_kernels.torch.chunkwise.native import mlstm_chunkwise__native_custbw

    naive = load_file_module("fla_gated_delta_naive", os.path.join(args.fla, "fla/ops/gated_delta_rule/naive.py"))
    return mlstm_chunkwise__native_custbw, naive.naive_chunk_gated_delta_rule


def best_seconds(fn, reps):
    fn()  # warm-up
    best = math.inf
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def time_peer(forward, inputs, reps):
    """(fwd s, fwd+bwd s) of forward(*inputs); the backward from a fixed random upstream gradient."""
    import torch

    with torch.no_grad():
        fwd = best_seconds(lambda: forward(*inputs), reps)
    upstream = torch.randn_like(forward(*inputs).detach())

    def step():
        out = forward(*inputs)
        out.backward(upstream)
        for x in inputs:
            x.grad = None

    return fwd, best_seconds(step, reps)


def peer_cases(n, mlstm_peer, gdn_peer):
    import torch

    def leaf(*shape):
        return torch.randn(*shape).requires_grad_(True)

    def mlstm_inputs():
        return (leaf(1, HEADS, n, DQK), leaf(1, HEADS, n, DQK), leaf(1, HEADS, n, DV), leaf(1, HEADS, n),
                (3.0 + torch.randn(1, HEADS, n)).requires_grad_(True))

    def mlstm(q, k, v, i, f):
        return mlstm_peer(q, k, v, i, f, chunk_size=CHUNK)

    def gdn_inputs():
        beta = torch.rand(1, n, HEADS).requires_grad_(True)
        log_decay = torch.nn.functional.logsigmoid(torch.randn(1, n, HEADS) + 4.0).requires_grad_(True)
        q = torch.nn.functional.normalize(torch.randn(1, n, HEADS, DQK), dim=-1).requires_grad_(True)
        k = torch.nn.functional.normalize(torch.randn(1, n, HEADS, DQK), dim=-1).requires_grad_(True)
        return q, k, leaf(1, n, HEADS, DV), log_decay, beta

    def gdn(q, k, v, g, beta):
        return gdn_peer(q, k, v, g, beta, chunk_size=CHUNK)[0]

    def swa_inputs():
        return leaf(1, ATT_HEADS, n, ATT_DIM), leaf(1, ATT_HEADS, n, ATT_DIM), leaf(1, ATT_HEADS, n, ATT_DIM)

    position = torch.arange(n)
    distance = position.unsqueeze(1) - position.unsqueeze(0)
    band = (distance >= 0) & (distance < WINDOW)

    def swa(q, k, v):
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(ATT_DIM)
        return torch.softmax(scores.masked_fill(~band, float("-inf")), dim=-1) @ v

    return {"mlstm": (mlstm, mlstm_inputs), "gdn": (gdn, gdn_inputs), "swa": (swa, swa_inputs)}


def time_swarmt(build, kernel, n, threads):
    cmd = [os.path.join(build, "swarmt"), "-q", "--threads", str(threads), "bench", "kernels", "--case",
           f"{kernel}:{n}:{CHUNK if kernel != 'swa' else 0}", "--heads", str(HEADS), "--dqk", str(DQK), "--dv", str(DV),
           "--window", str(WINDOW)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    result = json.loads(out)
    return result["fwd_ms"] / 1e3, result["fwdbwd_ms"] / 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mlstm-kernels", required=True, help="checkout of NX-AI/mlstm_kernels")
    parser.add_argument("--fla", required=True, help="checkout of fla-org/flash-linear-attention")
    parser.add_argument("--einops", required=True, help="checkout of arogozhnikov/einops")
    parser.add_argument("--lengths", default="16k", help="comma-separated sequence lengths (default 16k)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=1, help="timed repetitions after the warm-up (best of)")
    parser.add_argument("--skip", default="", help="kernels to leave out, e.g. swa (its peer is N x N)")
    parser.add_argument("--out", default="", help="JSON file for the results (default BUILD_DIR/kernels_vs_peers.json)")
    parser.add_argument("build", nargs="?", default="build")
    args = parser.parse_args()
    if args.threads < 1 or args.reps < 1:
        raise SystemExit("kernels_vs_peers: --threads and --reps must be >= 1")
    if not os.access(os.path.join(args.build, "swarmt"), os.X_OK):
        raise SystemExit(f"kernels_vs_peers: {args.build}/swarmt not found; run 'make build' first")
    skip = {s for s in args.skip.split(",") if s}
    unknown = skip - {"mlstm", "gdn", "swa"}
    if unknown:
        raise SystemExit(f"kernels_vs_peers: --skip: unknown kernel(s) {sorted(unknown)} (mlstm, gdn, swa)")
    lengths = [parse_length(t) for t in args.lengths.split(",")]
    try:
        import torch
    except ImportError:
        raise SystemExit(f"kernels_vs_peers: {sys.executable} has no PyTorch (Debian: apt-get install python3-torch, then run /usr/bin/python3)")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    mlstm_peer, gdn_peer = load_peers(args)

    rows = []
    print(f"torch {torch.__version__}, {args.threads} threads, best of {args.reps} after a warm-up")
    print("| kernel | N | swarmt fwd ms | peer fwd ms | swarmt fwd+bwd ms | peer fwd+bwd ms | fwd ratio | fwd+bwd ratio |")
    print("| --- | --: | --: | --: | --: | --: | --: | --: |")
    for n in lengths:
        cases = peer_cases(n, mlstm_peer, gdn_peer)
        for kernel in ("mlstm", "gdn", "swa"):
            if kernel in skip:
                continue
            ours = time_swarmt(args.build, kernel, n, args.threads)
            forward, make_inputs = cases[kernel]
            theirs = time_peer(forward, make_inputs(), args.reps)
            ratio = {"fwd": theirs[0] / ours[0], "fwdbwd": theirs[1] / ours[1]}
            rows.append({"kernel": kernel, "n": n, "swarmt_s": {"fwd": ours[0], "fwdbwd": ours[1]},
                         "peer_s": {"fwd": theirs[0], "fwdbwd": theirs[1]}, "ratio": ratio,
                         "targets": {k[1]: v for k, v in TARGETS.items() if k[0] == kernel}})
            print(f"| {kernel} | {n} | {ours[0] * 1e3:.1f} | {theirs[0] * 1e3:.1f} | {ours[1] * 1e3:.1f} | "
                  f"{theirs[1] * 1e3:.1f} | {ratio['fwd']:.1f}x | {ratio['fwdbwd']:.1f}x |", flush=True)
    print("targets: " + ", ".join(f"{k} {p} >= {v:g}x" for (k, p), v in TARGETS.items()))
    out = args.out or os.path.join(args.build, "kernels_vs_peers.json")
    with open(out, "w") as f:
        json.dump({"threads": args.threads, "reps": args.reps, "torch": torch.__version__, "rows": rows}, f, indent=1)
    print(f"results: {out}")


if __name__ == "__main__":
    main()
