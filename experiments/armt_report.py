#!/usr/bin/env python3
"""Collects an ARMT experiment into results.json and README.md (every number shown is in the JSON).

context: ARMT vs the fair baselines (full attention fine-tuned on the same data, with and without RoPE
         scaling; the base on its last T tokens) by length on every evaluation set, with 95% Wilson
         intervals; FLOPs and peak memory from `swarmt armt cost`; training stages.
recipe:  ARMT with a second seed, without the continued-LM phase and without the gamma correction.
(The layer study has its own report, experiments/armt_layers_report.py.)
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_lib import fmt, markdown_table, read_json, read_metrics, training_table, use_swarmt, write_outputs  # noqa: E402

SETS = {  # evaluation set -> what a reader sees
    "eval_d0": "the key alone",
    "eval_d4": "the key among 4 distractor facts (chance 20%)",
    "eval_d2_1T": "2 distractor facts inside one segment",
    "eval_rewrites": "4 distractors, the key's value rewritten twice (the latest is the answer)",
}
STAGES = ["base", "base_qa", "armt", "full_lm_2", "full_lm_4", "full_lm_8", "full_qa_2", "full_qa_4", "full_qa_8",
          "armt_s2", "armt_nolm", "armt_nogamma"]
LABELS = {"armt": "ARMT (memory in all layers)", "armt_s2": "ARMT, second seed", "full": "full attention, fine-tuned on the same data",
          "full_rope": "full attention + linear RoPE scaling", "base_last_T": "base, last T tokens",
          "base_qa": "base (its own context)", "armt_nolm": "ARMT without the continued-LM phase",
          "armt_nogamma": "ARMT without the gamma correction"}


def stage_info(work, name):
    path = os.path.join(work, name)
    if not os.path.isdir(path):
        return None
    train, val = read_metrics(os.path.join(path, "metrics.jsonl"))
    seconds_file = os.path.join(path, "train_seconds")
    return {"seconds": int(open(seconds_file).read()) if os.path.exists(seconds_file) else None,
            "steps": train.get("step"), "tokens": train.get("tokens"), "final_train_loss": train.get("loss"),
            "validation_loss": val.get("val_loss")}


def collect_cells(work):
    """model -> set -> length -> {mean, ci95, count, successes}, merged over every evaluation directory of a
    set (a model may be evaluated on length subsets of a set, e.g. eval_d0_4096)."""
    cells = {}
    eval_root = os.path.join(work, "eval")
    for directory in sorted(os.listdir(eval_root)):
        set_name = max((s for s in SETS if directory == s or directory.startswith(s + "_")), key=len, default=None)
        if set_name is None:
            continue
        for model in sorted(os.listdir(os.path.join(eval_root, directory))):
            summary = os.path.join(eval_root, directory, model, "summary.json")
            if not os.path.exists(summary):
                continue
            for row in read_json(summary)["aggregates"]["by_length"]:
                cells.setdefault(model, {}).setdefault(set_name, {})[str(row["length"])] = {
                    # Intervals exist where every score is 0 or 100 (exact match); partial scores have none.
                    "mean": row["mean"], "ci95": row.get("ci95"), "count": row["count"],
                    "successes": row.get("successes")}
    return cells


def cell_text(c):
    if c is None or c["mean"] is None:
        return "-"
    if c["ci95"] is None:
        return f"{c['mean']:.1f}"
    return f"{c['mean']:.1f} [{c['ci95'][0]:.0f}, {c['ci95'][1]:.0f}]"


def svg_plot(path, title, series, T, x_label=None, labels=None):
    """Exact match vs length with 95% Wilson bars, one line per model; log2 x axis in segments.

    Drawn here rather than by `swarmt eval compare` because a model's cells of one set may come from
    several evaluation directories (the full-attention baseline is run per length, with its own RoPE
    scaling), and compare draws one line per directory."""
    import math
    W, H, L, R, TOP, B = 640, 380, 60, 200, 40, 50
    lengths = sorted({int(n) for cells in series.values() for n in cells})
    if not lengths:
        return
    xs = [math.log2(n / T) for n in lengths]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    px = lambda n: L + (math.log2(n / T) - x0) / (x1 - x0) * (W - L - R)
    py = lambda v: TOP + (100 - v) / 100 * (H - TOP - B)
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="22" font-size="14">{title}</text>']
    for v in range(0, 101, 20):
        out.append(f'<line x1="{L}" x2="{W - R}" y1="{py(v)}" y2="{py(v)}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 8}" y="{py(v) + 4}" text-anchor="end">{v}%</text>')
    x_label = x_label or f"input length (segments of T = {T} tokens)"
    labels = LABELS if labels is None else labels
    for n in lengths:
        tick = f"{n // T}T" if n % T == 0 else str(n)
        out.append(f'<text x="{px(n)}" y="{H - B + 18}" text-anchor="middle">{tick}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">{x_label}</text>')
    for i, (name, cells) in enumerate(series.items()):
        colour = colours[i % len(colours)]
        points = sorted((int(n), c) for n, c in cells.items() if c["mean"] is not None)
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
            colour, " ".join(f"{px(n):.1f},{py(c['mean']):.1f}" for n, c in points)))
        for n, c in points:
            if c["ci95"] is not None:
                lo, hi = c["ci95"]
                out.append(f'<line x1="{px(n):.1f}" x2="{px(n):.1f}" y1="{py(lo):.1f}" y2="{py(hi):.1f}" stroke="{colour}"/>')
            out.append(f'<circle cx="{px(n):.1f}" cy="{py(c["mean"]):.1f}" r="3" fill="{colour}"/>')
        out.append(f'<rect x="{W - R + 12}" y="{TOP + 18 * i}" width="12" height="3" fill="{colour}"/>')
        out.append(f'<text x="{W - R + 28}" y="{TOP + 18 * i + 5}" font-size="11">{labels.get(name, name)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def set_tables(cells, models, T, results_dir, plot_prefix=""):
    """One table (exact match % [95% Wilson interval]) and one plot per evaluation set."""
    md = []
    for set_name, title in SETS.items():
        present = [m for m in models if set_name in cells.get(m, {})]
        if not present:
            continue
        lengths = sorted({int(n) for m in present for n in cells[m][set_name]})
        md += ["", f"## Exact match (%) [95% Wilson interval], {title}", ""]
        rows = [[LABELS.get(m, m)] + [cell_text(cells[m][set_name].get(str(n))) for n in lengths] for m in present]
        counts = sorted({c["count"] for m in present for c in cells[m][set_name].values()})
        md += markdown_table(["model"] + [f"{n // T}T ({n})" for n in lengths], rows)
        md += ["", f"Examples per cell: {', '.join(map(str, counts))}."]
        if len(lengths) > 1:
            plot = f"{plot_prefix}{set_name}.svg"
            svg_plot(os.path.join(results_dir, plot), f"Exact match vs context length, {title}",
                     {m: cells[m][set_name] for m in present}, T)
            md += ["", f"![{title}]({plot})"]
    return md


def comparisons(cells, T):
    """The acceptance questions, answered from the cells (None where a cell is missing)."""
    def get(model, set_name, n):
        return cells.get(model, {}).get(set_name, {}).get(str(n))
    out = {}
    for n in (16, 32):
        a = get("armt", "eval_d4", n * T)
        rivals = {m: get(m, "eval_d4", n * T) for m in ("full", "full_rope", "base_last_T")}
        if a:
            out[f"distractors_{n}T"] = {
                "armt": a["mean"], "armt_ci95": a["ci95"],
                "above_every_baseline_with_disjoint_intervals": a["ci95"] is not None and all(
                    r is not None and r["ci95"] is not None and a["ci95"][0] > r["ci95"][1] for r in rivals.values()),
                "baselines": {m: (r["mean"] if r else None) for m, r in rivals.items()}}
    for set_name in ("eval_d0", "eval_d2_1T"):
        a, b = get("armt", set_name, T), get("base_qa", set_name, T)
        if a and b:
            out[f"in_context_{set_name}"] = {"armt": a["mean"], "base": b["mean"], "difference": a["mean"] - b["mean"]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("kind", choices=["context", "recipe"])
    ap.add_argument("work")
    ap.add_argument("results")
    ap.add_argument("--mode", required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--swarmt", required=True)
    ap.add_argument("--segment", type=int, required=True, help="segment length T in tokens")
    ap.add_argument("--note", default="", help="a paragraph for the README, e.g. which stages this run did not reach")
    a = ap.parse_args()
    use_swarmt(a.swarmt)
    T = a.segment
    os.makedirs(a.results, exist_ok=True)
    cells = collect_cells(a.work)
    stages = {s: stage_info(a.work, s) for s in STAGES if stage_info(a.work, s) is not None}
    script = {"context": "armt_context", "recipe": "armt_recipe"}[a.kind]
    command = f"experiments/{script}.sh" + (" --quick" if a.mode == "quick" else "")
    results = {"experiment": script, "mode": a.mode, "command": command, "wall_seconds": a.seconds,
               "segment_tokens": T, "cells": cells, "training": stages}
    heading = {"context": "context extension and retrieval by key",
               "recipe": "the recipe's parts and a second seed"}[a.kind]
    md = [f"# ARMT: {heading}"
          f" ({a.mode} mode)", "",
          f"Command: `{command}` ({a.seconds // 60} min {a.seconds % 60} s on this run; stages already in the "
          f"work directory are reused and their own times are listed below). Segment T = {T} byte tokens. "
          "Task: `long_qa --templates code` (\"The code word of the Harbor Office is garnet.\" ... \"What is the "
          "code word of the Harbor Office?\"), exact match; every number is in `results.json`."]
    if a.note:
        md += ["", f"**Note.** {a.note}"]
        results["note"] = a.note
    if a.kind == "context":
        models = ["armt", "full", "full_rope", "base_last_T", "base_qa"]
        md += set_tables(cells, models, T, a.results)
        results["comparisons"] = comparisons(cells, T)
        md += ["", "## The acceptance questions", "", "```", json.dumps(results["comparisons"], indent=1), "```"]
        cost = read_json(os.path.join(a.work, "cost.json"))
        results["cost"] = cost["rows"]
        md += ["", "## Cost by input length (`swarmt armt cost`)", ""]
        rows = [[r["segments"], r["tokens"], fmt(r["armt_flops"] / 1e9, 2), fmt(r["base_flops"] / 1e9, 2),
                 fmt(r["flops_ratio"], 2), fmt(r["armt"]["peak_rss_bytes"] / 2**20),
                 fmt(r["base"]["peak_rss_bytes"] / 2**20) if r.get("base") else "-"] for r in cost["rows"]]
        md += markdown_table(["segments", "tokens", "ARMT GFLOP", "base (full attention) GFLOP", "ratio",
                              "ARMT peak RSS (MiB)", "base peak RSS (MiB)"], rows)
    else:
        md += set_tables(cells, ["armt", "armt_s2", "armt_nolm", "armt_nogamma"], T, a.results, "recipe_")
    md += ["", "## Training stages", ""]
    md += training_table(stages, "stage", "seconds", 4)
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
