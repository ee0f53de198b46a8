#!/usr/bin/env python3
"""Collects the SWAX window experiment into results.json and README.md (every number shown is in the JSON).

Reads, for each model in WORK: its training config (WORK/<model>.json), metrics.jsonl (last validation
loss, mean training tokens/s), train_seconds, and the summaries of `swarmt eval recall`
(WORK/eval/<kind>/<model>/summary.json, kind = own | other | cut | pairs2; own is required), plus the
learning-rate pilot runs WORK/pilot_lr*/ when present. Accuracies keep the 95 % Wilson intervals the
evaluations computed.
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_lib import experiment_parser, fmt, markdown_table, read_json, read_metrics_records, use_swarmt, write_outputs  # noqa: E402

EVAL_KINDS = ("own", "other", "cut", "pairs2")
FAR = (1024, 2048, 4096)  # 4 T, 8 T and 16 T for T = 256


def read_training(path):
    """Validation losses and the mean training throughput of a metrics.jsonl."""
    records = read_metrics_records(path)
    val = [r["val_loss"] for r in records if "val_loss" in r]
    train = [r for r in records if "val_loss" not in r and "loss" in r]
    speeds = [r["tokens_per_s"] for r in train if "tokens_per_s" in r]
    return {"validation_loss": val[-1] if val else None, "final_train_loss": train[-1]["loss"] if train else None,
            "tokens_per_s": sum(speeds) / len(speeds) if speeds else None}


def recall_scores(path):
    """Accuracy by distance of one `swarmt eval recall` summary: {distance: {mean, count, successes, ci95}}."""
    summary = read_json(path)
    out = {}
    for item in summary["aggregates"]["by_length"]:
        out[str(item["length"])] = {"mean": item.get("mean"), "count": item.get("count"),
                                    "successes": item.get("successes"), "ci95": item.get("ci95")}
    return {"window": summary["metadata"].get("window"), "pairs": summary["metadata"].get("pairs"),
            "by_distance": out}


def cell(score):
    if score is None or score.get("mean") is None:
        return "-"
    if score.get("ci95"):
        return f"{score['mean']:.0f} [{score['ci95'][0]:.0f}, {score['ci95'][1]:.0f}]"
    return fmt(score["mean"], 0)


def schedule_name(name):
    return name.split("_")[1]


def model_label(name):
    family, schedule, seed = name.split("_")
    return f"{'GDN' if family == 'gdn' else 'mLSTM'}-SWAX {schedule} ({seed.replace('s', 'seed ')})"


def distance_table(models, kind, distances):
    rows = []
    for name, m in models.items():
        ev = m["evals"].get(kind)
        if ev is None:
            continue
        rows.append([model_label(name), ev["window"]] + [cell(ev["by_distance"].get(d)) for d in distances])
    return markdown_table(["model", "window"] + distances, rows)


def claims(models):
    """The acceptance checks of the study, computed from the numbers above."""
    out = {"in_window": {}, "stochastic_vs_long": [], "validation_loss_ratio": []}
    for name, m in models.items():
        own = m["evals"]["own"]
        inside = [s for d, s in own["by_distance"].items() if int(d) < own["window"] and s.get("mean") is not None]
        out["in_window"][name] = {"window": own["window"], "distances": [d for d, s in own["by_distance"].items()
                                                                           if int(d) < own["window"]],
                                  "min_accuracy": min((s["mean"] for s in inside), default=None)}
    for name, m in models.items():
        family, schedule, seed = name.split("_")
        if schedule not in ("stochastic", "ramp"):
            continue
        long_name = f"{family}_long_{seed}"
        if long_name not in models:
            continue
        long_eval = models[long_name]["evals"]["own"]["by_distance"]
        for d in FAR:
            a, b = m["evals"]["own"]["by_distance"].get(str(d)), long_eval.get(str(d))
            if not a or not b or a.get("mean") is None or b.get("mean") is None:
                continue
            separate = bool(a.get("ci95") and b.get("ci95") and a["ci95"][0] > b["ci95"][1])
            out["stochastic_vs_long"].append({"model": name, "baseline": long_name, "distance": d,
                                              "accuracy": a["mean"], "baseline_accuracy": b["mean"],
                                              "difference": a["mean"] - b["mean"], "intervals_separate": separate})
        va, vb = m["validation_loss"], models[long_name]["validation_loss"]
        if va is not None and vb:
            out["validation_loss_ratio"].append({"model": name, "baseline": long_name, "ratio": va / vb})
    return out


def main():
    ap = experiment_parser(__doc__)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--swarmt", required=True, help="the swarmt binary (renders the tables)")
    a = ap.parse_args()
    use_swarmt(a.swarmt)

    models = {}
    for name in a.models:
        config = read_json(os.path.join(a.work, name + ".json"))
        training = read_training(os.path.join(a.work, name, "metrics.jsonl"))
        seconds_file = os.path.join(a.work, name, "train_seconds")
        evals = {}
        for kind in EVAL_KINDS:
            path = os.path.join(a.work, "eval", kind, name, "summary.json")
            if kind == "own" or os.path.exists(path):
                evals[kind] = recall_scores(path)
        models[name] = {
            "layer_pattern": config["model"]["layer_pattern"],
            "window_schedule": config["window_schedule"],
            "seed": config["training"]["seed"],
            "steps": config["training"]["max_steps"],
            "tokens": config["training"]["max_steps"] * config["training"]["batch_size"] * config["sequence_length"],
            "train_seconds": int(open(seconds_file).read()) if os.path.exists(seconds_file) else None,
            **training,
            "evals": evals,
        }
    pilot = {}
    for path in sorted(glob.glob(os.path.join(a.work, "pilot_lr*", "metrics.jsonl"))):
        lr = os.path.basename(os.path.dirname(path))[len("pilot_lr"):]
        pilot[lr] = read_training(path)["validation_loss"]
    T = read_json(os.path.join(a.work, a.models[0] + ".json"))["sequence_length"]
    found = claims(models)
    results = {"experiment": "swax_windows", "mode": a.mode, "wall_seconds": a.seconds, "training_length": T,
               "learning_rate": a.lr, "learning_rate_pilot": pilot, "models": models, "claims": found}

    distances = sorted({d for m in models.values() for d in m["evals"]["own"]["by_distance"]}, key=int)
    md = [f"# SWAX window schedules: recall by distance ({a.mode} mode)", "",
          "Written by `experiments/swax_windows.sh` (`experiments/swax_windows_report.py`); every number is in "
          "`results.json`. Accuracy (%) of recalling a fact asked d tokens after it was given, with 95 % Wilson "
          f"intervals; chance is 1.6 %. Training length T = {T}; learning rate {a.lr}; wall time {a.seconds} s.", ""]
    if pilot:
        md += ["## Learning-rate pilot (the long-window GDN-SWAX baseline, full steps; the winner is its seed-1 model)", ""]
        md += markdown_table(["learning rate", "validation loss"], [[lr, fmt(v, 3)] for lr, v in pilot.items()]) + [""]
    sections = [("own", "At each model's own window (stochastic models at the long window)"),
                ("other", "At the other window"),
                ("cut", "Control: recurrent memory cut one window before the question"),
                ("pairs2", "Two facts per probe (which value goes with the asked key)")]
    for kind, title in sections:
        if not any(kind in m["evals"] for m in models.values()):
            continue
        kind_distances = sorted({d for m in models.values() if kind in m["evals"]
                                 for d in m["evals"][kind]["by_distance"]}, key=int)
        md += [f"## {title}", ""] + distance_table(models, kind, kind_distances) + [""]
    md += ["## Training", ""]
    md += markdown_table(["model", "pattern", "steps", "tokens", "validation loss", "tokens/s", "seconds"],
                         [[model_label(n), m["layer_pattern"], m["steps"], m["tokens"], fmt(m["validation_loss"], 3),
                           fmt(m["tokens_per_s"], 0), m["train_seconds"] if m["train_seconds"] is not None else "-"]
                          for n, m in models.items()]) + [""]
    md += ["## Checks", "", "Lowest accuracy inside each model's own window:", ""]
    md += markdown_table(["model", "window", "distances", "lowest accuracy"],
                         [[model_label(n), c["window"], ", ".join(c["distances"]), fmt(c["min_accuracy"], 0)]
                          for n, c in found["in_window"].items()]) + [""]
    if found["stochastic_vs_long"]:
        md += ["Stochastic schedules against the long window, same family and seed, at 4-16 T:", ""]
        md += markdown_table(["model", "distance", "accuracy", "long window", "difference", "intervals separate"],
                             [[model_label(c["model"]), c["distance"], fmt(c["accuracy"], 0),
                               fmt(c["baseline_accuracy"], 0), fmt(c["difference"], 0),
                               "yes" if c["intervals_separate"] else "no"] for c in found["stochastic_vs_long"]]) + [""]
    if found["validation_loss_ratio"]:
        md += ["In-distribution validation loss relative to the long-window model:", ""]
        md += markdown_table(["model", "ratio"], [[model_label(c["model"]), fmt(c["ratio"], 3)]
                                                  for c in found["validation_loss_ratio"]]) + [""]
    plots = sorted(os.path.basename(p) for p in glob.glob(os.path.join(a.results, "recall_*.svg")))
    md += [f"![{p}]({p})" for p in plots]
    write_outputs(a.results, results, md)


if __name__ == "__main__":
    main()
