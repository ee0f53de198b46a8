#!/usr/bin/env python3
"""Collects an ARMT experiment into results.json and README.md (every number shown is in the JSON).

context: ARMT vs the base model (last T tokens; full attention) on long QA and needles by length, peak
         memory measured while evaluating, FLOPs and peak memory from `swarmt armt cost`, training stages.
layers:  ARMT with memory in all layers, in the middle-upper 20% and in the first layer: scores, memory
         parameters, FLOPs.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_lib import eval_scores, fmt, markdown_table, read_json, read_metrics, training_table, write_outputs  # noqa: E402

TASKS = {"qa": "long QA (one fact in filler text)", "needles": "needles (the fact among 4 distractor facts)"}
STAGES = ["base", "base_answer_1", "base_answer", "armt", "armt_mid", "armt_low"]


def stage_info(work, name):
    path = os.path.join(work, name)
    if not os.path.isdir(path):
        return None
    train, val = read_metrics(os.path.join(path, "metrics.jsonl"))
    seconds_file = os.path.join(path, "train_seconds")
    return {"seconds": int(open(seconds_file).read()) if os.path.exists(seconds_file) else None,
            "steps": train.get("step"), "tokens": train.get("tokens"), "final_train_loss": train.get("loss"),
            "validation_loss": val.get("val_loss")}


def model_scores(work, name):
    out = {}
    for task in TASKS:
        summary_path = os.path.join(work, "eval", task, name, "summary.json")
        scores = eval_scores(summary_path)
        meta = read_json(summary_path)["metadata"]
        scores["peak_rss_mib_by_length"] = {str(r["length"]): r["peak_rss_bytes"] / 2**20 for r in meta.get("resources", [])}
        scores["parameters"] = int(re.search(r"(\d+) parameters", meta.get("model_description", "0 parameters")).group(1))
        out[task] = scores
    return out


def memory_layout(swarmt, model_dir):
    """Layers holding a memory and the memory parameter count, read from the adapter's tensors."""
    info = json.loads(subprocess.run([swarmt, "-q", "info", model_dir, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
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


def score_tables(models, lengths, T):
    md = []
    for task, title in TASKS.items():
        md += ["", f"## Exact match (%), {title}", ""]
        rows = [[m] + [fmt(v[task]["by_length"].get(str(n))) for n in lengths] for m, v in models.items()]
        md += markdown_table(["model"] + [f"{n // T}T ({n})" for n in lengths], rows)
        md += ["", f"![{task}]({task}.svg)"]
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("kind", choices=["context", "layers"])
    ap.add_argument("work")
    ap.add_argument("results")
    ap.add_argument("--mode", required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--swarmt", default=None)
    ap.add_argument("--segment", type=int, required=True, help="segment length T in tokens")
    a = ap.parse_args()
    T = a.segment
    models = {m: model_scores(a.work, m) for m in a.models}
    lengths = models[a.models[0]]["qa"]["lengths"]
    names = STAGES if a.kind == "layers" else [s for s in STAGES if s not in ("armt_mid", "armt_low")]
    stages = {s: stage_info(a.work, s) for s in names if stage_info(a.work, s) is not None}
    script = "armt_context" if a.kind == "context" else "armt_memory_layers"
    command = f"experiments/{script}.sh" + (" --quick" if a.mode == "quick" else "")
    results = {"experiment": script, "mode": a.mode, "command": command, "wall_seconds": a.seconds,
               "segment_tokens": T, "lengths": lengths, "models": models, "training": stages}
    md = [f"# ARMT: {'context extension' if a.kind == 'context' else 'memory in all layers, a middle-upper 20% or the first layer'}"
          f" ({a.mode} mode)", "",
          f"Command: `{command}` ({a.seconds // 60} min {a.seconds % 60} s on this run; stages already in the "
          f"work directory are reused and their own times are listed below). Segment T = {T} byte tokens; "
          "exact match over the examples of each length; every number is in `results.json`."]
    md += score_tables(models, lengths, T)

    if a.kind == "context":
        cost = read_json(os.path.join(a.work, "cost.json"))
        results["cost"] = cost["rows"]
        md += ["", "## Cost by input length (`swarmt armt cost`)", ""]
        rows = [[r["segments"], r["tokens"], fmt(r["armt_flops"] / 1e9, 2), fmt(r["base_flops"] / 1e9, 2),
                 fmt(r["flops_ratio"], 2), fmt(r["armt"]["peak_rss_bytes"] / 2**20),
                 fmt(r["base"]["peak_rss_bytes"] / 2**20) if r.get("base") else "-"] for r in cost["rows"]]
        md += markdown_table(["segments", "tokens", "ARMT GFLOP", "base (full attention) GFLOP", "ratio",
                              "ARMT peak RSS (MiB)", "base peak RSS (MiB)"], rows)
        md += ["", "## Peak RSS while evaluating (MiB, QA set)", ""]
        rows = [[m] + [fmt(v["qa"]["peak_rss_mib_by_length"].get(str(n))) for n in lengths] for m, v in models.items()]
        md += markdown_table(["model"] + [f"{n // T}T" for n in lengths], rows)
        by_depth = read_json(os.path.join(a.work, "eval", "qa", "armt", "summary.json"))["aggregates"].get("by_length_depth", [])
        results["armt_qa_by_length_depth"] = by_depth
        depths = sorted({d["depth"] for d in by_depth})
        if depths:
            md += ["", "## ARMT exact match (%) by depth of the fact, long QA", ""]
            cell = {(d["length"], d["depth"]): d["mean"] for d in by_depth}
            rows = [[f"{int(dp)}-{int(dp) + 10}%"] + [fmt(cell.get((n, dp))) for n in lengths] for dp in depths]
            md += markdown_table(["depth"] + [f"{n // T}T" for n in lengths], rows)
    else:
        if not a.swarmt:
            raise SystemExit("armt_report: 'layers' needs --swarmt (the swarmt binary)")
        layout = {m: memory_layout(a.swarmt, os.path.join(a.work, m)) for m in a.models}
        costs = {m: read_json(os.path.join(a.work, f"cost_{m}.json"))["rows"] for m in a.models}
        results["memory"] = layout
        results["cost"] = costs
        md += ["", "## Memory and cost", ""]
        rows = []
        for m in a.models:
            flops = {r["segments"]: r["armt_flops"] for r in costs[m]}
            rows.append([m, ", ".join(map(str, layout[m]["memory_layers"])), layout[m]["memory_parameters"],
                         models[m]["qa"]["parameters"]] + [fmt(flops.get(s, float("nan")) / 1e9, 2) for s in (1, 8, 32)])
        md += markdown_table(["model", "memory layers", "memory parameters", "all parameters",
                              "GFLOP at 1 segment", "at 8", "at 32"], rows)

    md += ["", "## Training stages", ""]
    md += training_table(stages, "stage", "seconds", 4)
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
