#!/usr/bin/env python3
"""Memory and speed of `swarmt serve` sessions (issue: constant memory per conversation).

Usage: python3 bench/serve_sessions.py BUILD_DIR [--tokens 1048576] [--model DIR]

Without --model it initialises configs/swax-tiny.json (4 blocks mLSTM + sliding window, d 128, byte
tokenizer; untrained: speed and memory do not depend on the weights).
For each of two fresh server processes it feeds one session (1,024 tokens, then --tokens tokens) as
token-id prompts in pieces of 65,536, and reports: the server's RSS after reading (GET /health), the
saved state's size, the time to load it into a new session, and the streaming time to first token and
tokens/s of a 128-token greedy reply beside `swarmt generate --stats` on the same prompt.
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


def read_tokens(base, session, n):
    t0 = time.time()
    fed = 0
    while fed < n:
        piece = min(65536, n - fed)
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
    binary = os.path.join(build, "swarmt")
    work = tempfile.mkdtemp(prefix="serve-bench-")
    model = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else None
    if model is None:
        model = os.path.join(work, "tiny-swax")
        subprocess.run([binary, "-q", "model", "init", os.path.join(REPO, "configs", "swax-tiny.json"), "--out", model],
                       check=True)
    out = {"model": model, "runs": []}
    for n in (1024, tokens):
        proc, base = start(binary, model, work)
        try:
            seconds = read_tokens(base, "doc", n)
            rss = call(base, "/health")["rss_bytes"]
            saved = call(base, "/v1/sessions/doc/save", {"name": f"doc{n}"})
            loaded = call(base, "/v1/sessions/again/load", {"name": f"doc{n}"})
            out["runs"].append({"tokens_read": n, "read_seconds": seconds, "read_tokens_per_s": n / seconds,
                                "server_rss_bytes": rss, "state_file_bytes": saved["bytes"],
                                "state_bytes": saved["state_bytes"], "load_seconds": loaded["seconds"]})
            if n == 1024:
                out["stream"] = streamed_reply(base, "Once upon a time")
        finally:
            proc.terminate()
            proc.wait()
    gen = subprocess.run([binary, "generate", "--model", model, "--prompt", "Once upon a time", "-n", "128",
                          "--ignore-eos", "--stats"], capture_output=True, text=True, check=True)
    out["generate_stats"] = json.loads(gen.stderr.strip().splitlines()[-1])
    a, b = out["runs"]
    out["rss_ratio_long_over_short"] = b["server_rss_bytes"] / a["server_rss_bytes"]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
