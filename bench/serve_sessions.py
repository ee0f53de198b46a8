#!/usr/bin/env python3
"""Memory and speed of `swarmt serve` sessions (issue: constant memory per conversation).

Usage: python3 bench/serve_sessions.py BUILD_DIR [--tokens 1048576] [--piece 1024] [--model DIR]

Without --model it initialises configs/swax-tiny.json (4 blocks mLSTM + sliding window, d 128, byte
tokenizer; untrained: speed and memory do not depend on the weights).
One server process: first 200 stateless requests of --piece tokens (a process's heap grows over its
first requests whatever they hold: RSS 189 -> 246 MiB over 100 such requests, then flat), then one
session reads 1,024 tokens, then the same session reads on to --tokens tokens, all as token-id prompts
of --piece tokens. At both points: the server's RSS (GET /health), the saved state's size, the time to
load it into a new session. Then the streaming time to first token and tokens/s of a 128-token greedy
reply (5 runs; the client reads one chunk per token), beside `swarmt generate --stats` on the same prompt
(5 runs; its time to first token is the prefill's).
Prints one JSON object.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def call(base, path, body=None, stream=False):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    resp = urllib.request.urlopen(req, timeout=3600)
    return resp if stream else json.loads(resp.read())


def start(binary, model, work):
    log = open(os.path.join(work, "serve.out"), "w+")
    proc = subprocess.Popen([binary, "serve", "--model", model, "--port", "0", "--state-dir", os.path.join(work, "states"),
                             "--max-body-bytes", str(64 << 20)], stdout=log, stderr=subprocess.DEVNULL)
    for _ in range(600):
        time.sleep(0.1)
        log.seek(0)
        line = log.readline()
        if line.startswith("listening on "):
            return proc, line.split()[-1].strip()
    proc.kill()
    sys.exit("the server did not start")


def read_tokens(base, session, n, piece_size):
    t0 = time.time()
    fed = 0
    while fed < n:
        piece = min(piece_size, n - fed)
        ids = [32 + (i * 7919) % 90 for i in range(fed, fed + piece)]
        call(base, "/v1/completions", {"prompt": ids, "max_tokens": 0, "session_id": session})
        fed += piece
    return time.time() - t0


def streamed_reply(base, prompt):
    """Time to the first generated token and tokens/s after it, one chunk per token (return_tokens)."""
    t0 = time.time()
    first = None
    n = 0
    with call(base, "/v1/completions", {"prompt": prompt, "max_tokens": 128, "temperature": 0, "ignore_eos": True,
                                         "stream": True, "return_tokens": True}, stream=True) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            ids = json.loads(line[6:])["choices"][0].get("token_ids", [])
            if ids:
                n += len(ids)
                first = first or time.time()
    end = time.time()
    return {"ttft_s": first - t0, "tokens": n, "tokens_per_s_after_first": (n - 1) / (end - first)}


def main():
    build = sys.argv[1]
    tokens = int(sys.argv[sys.argv.index("--tokens") + 1]) if "--tokens" in sys.argv else 1048576
    piece_size = int(sys.argv[sys.argv.index("--piece") + 1]) if "--piece" in sys.argv else 1024
    binary = os.path.join(build, "swarmt")
    work = tempfile.mkdtemp(prefix="serve-bench-")
    model = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else None
    if model is None:
        model = os.path.join(work, "tiny-swax")
        subprocess.run([binary, "-q", "model", "init", os.path.join(REPO, "configs", "swax-tiny.json"), "--out", model],
                       check=True)
    out = {"model": model, "piece_tokens": piece_size, "runs": []}
    proc, base = start(binary, model, work)
    try:
        warm_ids = [32 + i % 90 for i in range(piece_size)]
        for _ in range(200):
            call(base, "/v1/completions", {"prompt": warm_ids, "max_tokens": 0})
        read = 0
        for n in (1024, tokens):
            seconds = read_tokens(base, "doc", n - read, piece_size)
            read = n
            rss = call(base, "/health")["rss_bytes"]
            saved = call(base, "/v1/sessions/doc/save", {"name": f"doc{n}"})
            loaded = call(base, "/v1/sessions/again/load", {"name": f"doc{n}"})
            out["runs"].append({"tokens_read": n, "read_seconds": seconds, "server_rss_bytes": rss,
                                "state_file_bytes": saved["bytes"], "state_bytes": saved["state_bytes"],
                                "load_seconds": loaded["seconds"]})
        out["stream_runs"] = [streamed_reply(base, "Once upon a time") for _ in range(5)]
    finally:
        proc.terminate()
        proc.wait()
    out["generate_runs"] = []
    for _ in range(5):
        gen = subprocess.run([binary, "generate", "--model", model, "--prompt", "Once upon a time", "-n", "128",
                              "--ignore-eos", "--stats"], capture_output=True, text=True, check=True)
        out["generate_runs"].append(json.loads(gen.stderr.strip().splitlines()[-1]))
    median = lambda xs: sorted(xs)[len(xs) // 2]
    out["median_stream_ttft_s"] = median([r["ttft_s"] for r in out["stream_runs"]])
    out["median_stream_tokens_per_s"] = median([r["tokens_per_s_after_first"] for r in out["stream_runs"]])
    out["median_generate_decode_tokens_per_s"] = median([r["decode_tokens_per_s"] for r in out["generate_runs"]])
    out["median_generate_first_token_s"] = median([r["prompt_tokens"] / r["prefill_tokens_per_s"]
                                                   for r in out["generate_runs"]])
    a, b = out["runs"]
    out["rss_ratio_long_over_short"] = b["server_rss_bytes"] / a["server_rss_bytes"]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
