"""Helpers shared by the experiment reports: reading swarmt outputs, writing results.json and README.md."""
import argparse
import json
import math
import os
import subprocess

_SWARMT = None  # the swarmt binary that renders tables (use_swarmt)


def use_swarmt(path):
    """Tables are rendered by `swarmt report table`, the writer of the engine's own reports."""
    global _SWARMT
    _SWARMT = path


def experiment_parser(description):
    """The arguments every experiment report takes: its work directory, its results directory, the mode and
    the run's wall seconds."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("work")
    ap.add_argument("results")
    ap.add_argument("--mode", required=True)
    ap.add_argument("--seconds", type=int, required=True)
    return ap


def recall_study_parser(description):
    """experiment_parser with the options of the recall studies' reports: the swarmt binary and T."""
    ap = experiment_parser(description)
    ap.add_argument("--swarmt", required=True)
    ap.add_argument("--segment", type=int, required=True, help="segment length T in tokens")
    return ap


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"report: cannot read {path}: {e}")


def read_metrics_records(path):
    """Every record of a metrics.jsonl, in order."""
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise SystemExit(f"report: cannot read {path}: {e}")


def read_metrics(path):
    """The last training record and the last validation record of a metrics.jsonl."""
    train, val = {}, {}
    for record in read_metrics_records(path):
        if "val_loss" in record:
            val = record
        elif "loss" in record:
            train = record
    return train, val


def _mean(item):
    m = item.get("mean")
    return None if m is None or (isinstance(m, float) and math.isnan(m)) else m


def eval_scores(summary_path):
    """Scores of one `swarmt eval` report: overall, by length, by variant and length (keys are strings)."""
    agg = read_json(summary_path)["aggregates"]
    by_vl = {}
    for item in agg["by_variant_length"]:
        by_vl.setdefault(item["variant"], {})[str(item["length"])] = _mean(item)
    return {"lengths": agg["lengths"], "variants": agg["variants"], "overall": _mean({"mean": agg.get("overall")}),
            "by_length": {str(item["length"]): _mean(item) for item in agg["by_length"]},
            "by_variant_length": by_vl}


def wilson(successes, n, z=1.959963984540054):
    """95% Wilson score interval of successes / n, in percent (the interval `swarmt eval` reports per cell)."""
    if n <= 0 or not 0 <= successes <= n:
        raise SystemExit(f"report: no interval for {successes} of {n}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [100 * max(0.0, centre - half), 100 * min(1.0, centre + half)]


def pooled(cells):
    """One cell from several of right-or-wrong questions: successes and counts summed, its Wilson interval."""
    successes = sum(c["successes"] for c in cells)
    count = sum(c["count"] for c in cells)
    return {"mean": 100 * successes / count, "ci95": wilson(successes, count), "count": count, "successes": successes}


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def markdown_table(header, rows):
    """The table's lines, as `swarmt report table` renders them (first column left, the others right)."""
    if _SWARMT is None:
        raise SystemExit("report: no swarmt binary to render tables (report_lib.use_swarmt)")
    table = {"header": [str(h) for h in header], "rows": [[str(c) for c in row] for row in rows]}
    try:
        out = subprocess.run([_SWARMT, "-q", "report", "table"], input=json.dumps(table), text=True,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        raise SystemExit(f"report: {_SWARMT} report table failed: {detail.strip()}")
    return out.rstrip("\n").split("\n")


def write_outputs(directory, results, markdown_lines):
    os.makedirs(directory, exist_ok=True)
    for name, text in (("results.json", json.dumps(results, indent=1) + "\n"),
                       ("README.md", "\n".join(markdown_lines) + "\n")):
        tmp = os.path.join(directory, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(directory, name))


def training_table(runs, name_column, seconds_key, digits):
    """The training table of a report: steps, tokens, last losses and wall seconds of each run."""
    rows = [[name, v["steps"], v["tokens"], fmt(v["final_train_loss"], digits), fmt(v["validation_loss"], digits),
             v[seconds_key] if v[seconds_key] is not None else "-"] for name, v in runs.items()]
    return markdown_table([name_column, "steps", "tokens", "last training loss", "validation loss", "seconds"], rows)
