#!/usr/bin/env python3
"""Collects the ARMT layer study (experiments/armt_memory_layers.sh) into results.json and README.md.

Each arm is ARMT over the same 8-layer base with memory in one subset of its layers. Cells are recall
accuracies with 95% Wilson intervals, read from the `swarmt eval recall` reports in WORK/eval/<set>/<arm>/;
pooled cells sum the questions of several distances and take the Wilson interval of the sum. Memory layers
and parameters are read from each model's adapter tensors, FLOPs from `swarmt armt cost`. Every number
shown is in results.json.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from armt_report import cell_text, stage_info, svg_plot  # noqa: E402
from armt_retrieval_report import collect_cells  # noqa: E402
from report_lib import (fmt, markdown_table, pooled, read_json, recall_study_parser, training_table,  # noqa: E402
                        use_swarmt, write_outputs)

ARMS = {  # model directory -> what a reader sees (short: the plots' legends)
    "layers_all": "all layers",
    "layers_middle_upper": "middle-upper 20%",
    "layers_bottom": "bottom 20% (control)",
    "layers_top": "top 20% (control)",
    "layers_alternate": "every other layer",
}
BASE = {"base8": "base, no memory"}
SETS = {  # probe set -> what a reader sees
    "in_context": "two facts inside the first segment (the arm's own 1T score; 50% for one of the two)",
    "three_facts": "three facts, one per segment (the count trained; 33% for one of the three)",
    "five_facts": "five facts, one per segment, each asked among 4 others (20% for one of the five)",
}
PLOT_TITLES = {"three_facts": "Recall vs distance by memory layers, three facts",
               "five_facts": "Recall vs distance by memory layers, five facts (4 distractors)"}
POOLED = ("five_facts", (8, 16, 32))  # the acceptance: middle-upper within 5 points of all layers at 8-32T
WITHIN = 5.0


def memory_layout(swarmt, model_dir):
    """Layers holding a memory and the memory's parameter count, read from the adapter's tensors."""
    try:
        info = json.loads(subprocess.run([swarmt, "-q", "info", model_dir, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        raise SystemExit(f"report: cannot read the tensors of {model_dir}: {getattr(e, 'stderr', '') or e}")
    layers, params = set(), 0
    for t in info["tensors"]:
        m = re.match(r"armt\.layers\.(\d+)\.", t["name"])
        if m:
            layers.add(int(m.group(1)))
            n = 1
            for d in t["shape"]:
                n *= d
            params += n
    return {"memory_layers": sorted(layers), "memory_parameters": params}


def comparisons(cells, T):
    """Each arm's pooled five-fact score at 8-32T against memory in all layers, beside its own 1T score."""
    set_name, lengths = POOLED
    out = {}
    for arm in ARMS:
        parts = [cells.get(arm, {}).get(set_name, {}).get(str(n * T)) for n in lengths]
        if not all(parts):
            continue
        out[arm] = {"pooled": pooled(parts)}
        inside = cells.get(arm, {}).get("in_context", {}).get("4")
        out[arm]["in_context"] = inside and inside["mean"]
    reference = out.get("layers_all")
    for arm, row in out.items():
        if reference and arm != "layers_all":
            a, b = row["pooled"], reference["pooled"]
            row["difference_to_all"] = a["mean"] - b["mean"]
            row[f"within_{WITHIN:g}_points_of_all"] = abs(a["mean"] - b["mean"]) <= WITHIN
            row["intervals_overlap_with_all"] = a["ci95"][0] <= b["ci95"][1] and b["ci95"][0] <= a["ci95"][1]
    return out


def main():
    a = recall_study_parser(__doc__).parse_args()
    use_swarmt(a.swarmt)
    T = a.segment
    os.makedirs(a.results, exist_ok=True)
    arms = [m for m in ARMS if os.path.isdir(os.path.join(a.work, m))]
    labels = dict(ARMS, **BASE)
    cells = collect_cells(a.work, SETS)
    stages = {s: stage_info(a.work, s) for s in list(BASE) + arms}
    layout = {m: memory_layout(a.swarmt, os.path.join(a.work, m)) for m in arms}
    costs = {m: read_json(os.path.join(a.work, f"cost_{m}.json"))["rows"] for m in arms}
    command = "experiments/armt_memory_layers.sh" + (" --quick" if a.mode == "quick" else "")
    results = {"experiment": "armt_memory_layers", "mode": a.mode, "command": command, "wall_seconds": a.seconds,
               "segment_tokens": T, "cells": cells, "memory": layout, "cost": costs, "training": stages,
               "comparisons": comparisons(cells, T)}
    md = [f"# ARMT: which layers hold a memory ({a.mode} mode)", "",
          f"Command: `{command}` ({a.seconds // 60} min {a.seconds % 60} s on this run; stages already in the work "
          f"directory are reused and their own times are listed below). Segment T = {T} tokens. Every arm is ARMT "
          "over the same 8-layer base, trained by the same configs but for the layers that hold a memory. Task: "
          "token-level recall (a fact is \"key value\", a question repeats the key; 8 keys a-h, 8 values A-H, "
          "filler bytes 128-255); accuracy of the argmax over the whole vocabulary (12.5% for a guess among the 8 "
          "values). Columns: how far the question is from the fact it asks about."]
    for set_name, title in SETS.items():
        present = [m for m in list(BASE) + arms if set_name in cells.get(m, {})]
        if not present:
            continue
        distances = sorted({int(n) for m in present for n in cells[m][set_name]})
        md += ["", f"## Accuracy (%) [95% Wilson interval], {title}", ""]
        rows = [[labels[m]] + [cell_text(cells[m][set_name].get(str(n))) for n in distances] for m in present]
        md += markdown_table(["memory"] + [f"{n // T}T ({n})" if n % T == 0 else f"{n} (in-segment)"
                                           for n in distances], rows)
        counts = sorted({c["count"] for m in present for c in cells[m][set_name].values()})
        md += ["", f"Questions per cell: {', '.join(map(str, counts))}."]
        if len(distances) > 1:
            plot = f"{set_name}.svg"
            svg_plot(os.path.join(a.results, plot), PLOT_TITLES[set_name], {m: cells[m][set_name] for m in present}, T,
                     x_label=f"distance from the fact to its question (segments of T = {T} tokens)", labels=labels)
            md += ["", f"![{title}]({plot})"]
    md += ["", "## Five facts at 8T-32T pooled, against memory in all layers", ""]
    rows = []
    for arm, row in results["comparisons"].items():
        p = row["pooled"]
        rows.append([labels[arm], cell_text(p), p["count"], fmt(row.get("difference_to_all")),
                     row.get("intervals_overlap_with_all", "-"), fmt(row["in_context"])])
    md += markdown_table(["memory", "pooled accuracy (%) [95% interval]", "questions", "difference to all layers",
                          "intervals overlap", "own in-segment score (%)"], rows)
    md += ["", "## Memory and cost", ""]
    rows = []
    for m in arms:
        flops = {r["segments"]: r["armt_flops"] for r in costs[m]}
        rows.append([labels[m], ", ".join(map(str, layout[m]["memory_layers"])), layout[m]["memory_parameters"]]
                    + [fmt(flops.get(k, float("nan")) / 1e9, 3) for k in (1, 8, 32)])
    md += markdown_table(["memory", "memory layers", "memory parameters", "GFLOP at 1 segment", "at 8", "at 32"], rows)
    md += ["", "## Training stages", ""]
    md += training_table({k: v for k, v in stages.items() if v is not None}, "stage", "seconds", 4)
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
