#!/usr/bin/env python3
"""Collects the SWAX window experiment into results.json and README.md (every number shown is in the JSON).

Reads, for each model in WORK: the training config (WORK/<model>.json), its metrics.jsonl (last training
loss, last validation loss), train_seconds, and the summaries of `swarmt eval niah` and `swarmt eval mqar`
(WORK/eval/<eval>/<model>/summary.json), and the loss by position of `swarmt eval ppl` on essay text
16 times the training length (WORK/eval/ppl/<model>/results.json).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_lib import eval_scores, fmt, markdown_table, read_json, read_metrics, training_table, write_outputs  # noqa: E402


def schedule_text(schedule):
    kind = schedule.get("type", "none")
    if kind == "fixed":
        return f"fixed {schedule['window']}"
    if kind == "stochastic":
        return (f"stochastic {schedule['short_window']}/{schedule['long_window']}, p={schedule['p_short']}, "
                f"last {int(schedule['anneal_fraction'] * 100)}% long")
    return "none (no attention)"


def loss_by_range(ppl_results, T, lengths):
    """Token-weighted mean loss over positions [0, T) and [n/2, n) for each evaluated length n > T.

    The ppl buckets are powers of two, so every range is a union of whole buckets."""
    ranges = [(0, T)] + [(n // 2, n) for n in lengths if n > T]
    out = {}
    for begin, end in ranges:
        inside = [b for b in ppl_results["buckets"] if b["begin"] >= begin and b["end"] <= end]
        tokens = sum(b["tokens"] for b in inside)
        out[f"{begin}-{end}"] = sum(b["mean_loss"] * b["tokens"] for b in inside) / tokens if tokens else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("work")
    ap.add_argument("results")
    ap.add_argument("--mode", required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--models", nargs="+", required=True)
    a = ap.parse_args()

    models = {}
    for m in a.models:
        config = read_json(os.path.join(a.work, m + ".json"))
        train, val = read_metrics(os.path.join(a.work, m, "metrics.jsonl"))
        seconds_file = os.path.join(a.work, m, "train_seconds")
        models[m] = {
            "layer_pattern": config["model"]["layer_pattern"],
            "window_schedule": config["window_schedule"],
            "steps": config["training"]["max_steps"],
            "tokens": config["training"]["max_steps"] * config["training"]["batch_size"] * config["sequence_length"],
            "train_seconds": int(open(seconds_file).read()) if os.path.exists(seconds_file) else None,
            "final_train_loss": train.get("loss"),
            "validation_loss": val.get("val_loss"),
            "niah": eval_scores(os.path.join(a.work, "eval", "niah", m, "summary.json")),
            "mqar": eval_scores(os.path.join(a.work, "eval", "mqar", m, "summary.json")),
        }
    first = read_json(os.path.join(a.work, a.models[0] + ".json"))
    T = first["sequence_length"]
    lengths = models[a.models[0]]["niah"]["lengths"]
    results = {"experiment": "swax_windows", "mode": a.mode, "wall_seconds": a.seconds,
               "training_length": T, "lengths": lengths, "models": models,
               "command": "experiments/swax_windows.sh" + (" --quick" if a.mode == "quick" else "")}

    def beyond(scores):  # mean over the lengths past the training length
        vals = [scores["by_length"][str(n)] for n in lengths if n > T and scores["by_length"].get(str(n)) is not None]
        return sum(vals) / len(vals) if vals else None

    for name, m in models.items():
        ppl = read_json(os.path.join(a.work, "eval", "ppl", name, "results.json"))
        m["essay_loss_by_position"] = loss_by_range(ppl, T, lengths)
        m["essay_loss_buckets"] = ppl["buckets"]
        m["niah_mean_beyond_T"] = beyond(m["niah"])
        m["mqar_mean_beyond_T"] = beyond(m["mqar"])

    md = [f"# SWAX window sizes ({a.mode} mode)", "",
          f"Command: `{results['command']}` ({a.seconds // 60} min {a.seconds % 60} s on this run; models already "
          "trained in the work directory are reused, and the training table gives each one's own time). "
          f"Training length T = {T} tokens; scores in percent; every number is in `results.json`.", "",
          "## Summary", ""]
    rows = [[m, v["layer_pattern"], schedule_text(v["window_schedule"]), fmt(v["validation_loss"], 3),
             fmt(v["niah"]["by_length"].get(str(T))), fmt(v["niah_mean_beyond_T"]),
             fmt(v["mqar"]["by_length"].get(str(T))), fmt(v["mqar_mean_beyond_T"])] for m, v in models.items()]
    md += markdown_table(["model", "layers", "training window", "validation loss", f"NIAH @T",
                          "NIAH 2T-16T", "MQAR @T", "MQAR 2T-16T"], rows)
    for e, title in (("niah", "RULER needles (niah_single_1 and niah_multikey_2, averaged)"),
                     ("mqar", "MQAR (8 key-value pairs)")):
        md += ["", f"## {title} by context length", ""]
        rows = [[m] + [fmt(v[e]["by_length"].get(str(n))) for n in lengths] for m, v in models.items()]
        md += markdown_table(["model"] + [f"{n // T}T ({n})" for n in lengths], rows)
        for group in ("mlstm", "gdn"):
            md += ["", f"![{e} {group}]({e}_{group}.svg)"]
    md += ["", f"## Loss by position on essay text of {lengths[-1]} tokens (nats per byte, `swarmt eval ppl`)", "",
           "Positions past T were never trained on; a loss that stays flat there means the model extrapolates.", ""]
    ranges = list(models[a.models[0]]["essay_loss_by_position"])
    rows = [[m] + [fmt(v["essay_loss_by_position"][r], 3) for r in ranges] for m, v in models.items()]
    md += markdown_table(["model"] + [f"positions {r}" for r in ranges], rows)
    md += ["", "## NIAH by variant", ""]
    variants = models[a.models[0]]["niah"]["variants"]
    rows = [[m, var] + [fmt(v["niah"]["by_variant_length"][var].get(str(n))) for n in lengths]
            for m, v in models.items() for var in variants]
    md += markdown_table(["model", "variant"] + [f"{n // T}T" for n in lengths], rows)
    md += ["", "## Training", ""]
    md += training_table(models, "model", "train_seconds", 3)
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
