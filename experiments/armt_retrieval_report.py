#!/usr/bin/env python3
"""Collects the ARMT retrieval study (experiments/armt_retrieval.sh) into results.json and README.md.

Every cell is a recall accuracy with its 95% Wilson interval, read from the `swarmt eval recall` reports in
WORK/eval/<probe set>/<model>/ (a model's cells of one set may come from several reports, e.g. the
full-attention baseline with a RoPE factor per length). Every number shown is in results.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from armt_report import cell_text, stage_info, svg_plot  # noqa: E402
from report_lib import experiment_parser, fmt, markdown_table, read_json, training_table, use_swarmt, write_outputs  # noqa: E402

SETS = {  # probe set -> what a reader sees
    "one_fact": "one fact",
    "five_facts": "five facts, each asked among 4 others (20% for picking one of the five stated values)",
    "rewrites": "five facts rewritten twice, the answer the latest value",
}
MODELS = ["armt", "full", "full_rope", "base_recall"]
LABELS = {"armt": "ARMT (memory in all layers)", "full": "full attention, trained on the same data",
          "full_rope": "full attention + linear RoPE scaling", "base_recall": "base (its own context)"}
STAGES = ["base", "base_recall", "armt", "full_2", "full_4", "full_8"]


def collect_cells(work):
    """model -> set -> distance -> {mean, ci95, count, successes}, over every report of the work directory."""
    cells = {}
    root = os.path.join(work, "eval")
    for set_name in SETS:
        for dirpath, _, files in os.walk(os.path.join(root, set_name)):
            if "summary.json" not in files:
                continue
            model = os.path.relpath(dirpath, os.path.join(root, set_name)).split(os.sep)[0]
            for row in read_json(os.path.join(dirpath, "summary.json"))["aggregates"]["by_length"]:
                cells.setdefault(model, {}).setdefault(set_name, {})[str(row["length"])] = {
                    "mean": row["mean"], "ci95": row.get("ci95"), "count": row["count"],
                    "successes": row.get("successes")}
    return cells


def distance_label(n, T):
    return f"{n // T}T ({n})" if n % T == 0 else f"{n} (in-segment)"


def comparisons(cells, T):
    """The issue's questions, answered from the cells (absent where a cell is missing)."""
    def get(model, set_name, n):
        return cells.get(model, {}).get(set_name, {}).get(str(n))

    def disjoint_above(a, rivals):
        return a is not None and a["ci95"] is not None and all(
            r is not None and r["ci95"] is not None and a["ci95"][0] > r["ci95"][1] for r in rivals)

    out = {}
    for set_name in SETS:
        for n in (16, 32):
            a = get("armt", set_name, n * T)
            rivals = [get(m, set_name, n * T) for m in ("full", "full_rope")]
            if a:
                out[f"{set_name}_{n}T"] = {"armt": a["mean"], "armt_ci95": a["ci95"],
                                           "full": rivals[0] and rivals[0]["mean"],
                                           "full_rope": rivals[1] and rivals[1]["mean"],
                                           "above_both_baselines_with_disjoint_intervals": disjoint_above(a, rivals)}
    for n in (8, 20):
        a, b = get("armt", "one_fact", n), get("base_recall", "one_fact", n)
        if a and b:
            out[f"in_segment_{n}"] = {"armt": a["mean"], "base": b["mean"], "difference": a["mean"] - b["mean"]}
    return out


def main():
    ap = experiment_parser(__doc__)
    ap.add_argument("--swarmt", required=True)
    ap.add_argument("--segment", type=int, required=True, help="segment length T in tokens")
    a = ap.parse_args()
    use_swarmt(a.swarmt)
    T = a.segment
    os.makedirs(a.results, exist_ok=True)
    cells = collect_cells(a.work)
    stages = {s: stage_info(a.work, s) for s in STAGES if stage_info(a.work, s) is not None}
    command = "experiments/armt_retrieval.sh" + (" --quick" if a.mode == "quick" else "")
    results = {"experiment": "armt_retrieval", "mode": a.mode, "command": command, "wall_seconds": a.seconds,
               "segment_tokens": T, "cells": cells, "training": stages, "comparisons": comparisons(cells, T)}
    md = [f"# ARMT: associative retrieval across segments ({a.mode} mode)", "",
          f"Command: `{command}` ({a.seconds // 60} min {a.seconds % 60} s on this run; stages already in the work "
          f"directory are reused and their own times are listed below). Segment T = {T} tokens. Task: token-level "
          "recall (a fact is \"key value\", a question repeats the key; 64 keys, 64 values, filler from other "
          "ids); accuracy of the argmax over the whole vocabulary (chance 1.6%). Columns: how far the question "
          "is from the fact it asks about."]
    for set_name, title in SETS.items():
        present = [m for m in MODELS if set_name in cells.get(m, {})]
        if not present:
            continue
        distances = sorted({int(n) for m in present for n in cells[m][set_name]})
        md += ["", f"## Accuracy (%) [95% Wilson interval], {title}", ""]
        rows = [[LABELS[m]] + [cell_text(cells[m][set_name].get(str(n))) for n in distances] for m in present]
        md += markdown_table(["model"] + [distance_label(n, T) for n in distances], rows)
        counts = sorted({c["count"] for m in present for c in cells[m][set_name].values()})
        md += ["", f"Questions per cell: {', '.join(map(str, counts))}."]
        if len(distances) > 1:
            plot = f"{set_name}.svg"
            svg_plot(os.path.join(a.results, plot), f"Recall accuracy vs distance, {title.split(' (')[0]}",
                     {m: cells[m][set_name] for m in present}, T,
                     x_label=f"distance from the fact to its question (segments of T = {T} tokens)", labels=LABELS)
            md += ["", f"![{title}]({plot})"]
    md += ["", "## The acceptance questions", ""]
    rows = [[k, fmt(v.get("armt")), fmt(v.get("full") if "full" in v else v.get("base")),
             fmt(v.get("full_rope")), v.get("above_both_baselines_with_disjoint_intervals", "-")]
            for k, v in results["comparisons"].items()]
    md += markdown_table(["cell", "ARMT", "full attention (or base)", "full + RoPE scaling",
                          "ARMT above both, intervals disjoint"], rows)
    md += ["", "## Training stages", ""]
    md += training_table(stages, "stage", "seconds", 4)
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
